use super::*;

fn v(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

#[test]
fn split_args_basic() {
    assert_eq!(split_args(""), Vec::<String>::new());
    assert_eq!(split_args("   "), Vec::<String>::new());
    assert_eq!(split_args("a, b ,c"), v(&["a", "b", "c"]));
    assert_eq!(split_args("a,"), v(&["a"]));
    assert_eq!(split_args("a, , b"), v(&["a", "", "b"]));
    assert_eq!(
        split_args("\"x, y\", 'p,q', f(1, 2), [3, 4], {5, 6}"),
        v(&["\"x, y\"", "'p,q'", "f(1, 2)", "[3, 4]", "{5, 6}"])
    );
    assert_eq!(split_args("a // c, d\n, b /* , */"), v(&["a", "b"]));
    assert_eq!(split_args("\"a\\\", b\", c"), v(&["\"a\\\", b\"", "c"]));
}

#[test]
fn split_words_basic() {
    assert_eq!(split_words("  a  b\tc\n"), v(&["a", "b", "c"]));
    assert_eq!(
        split_words("x \"y z\" 'p q'"),
        v(&["x", "\"y z\"", "'p q'"])
    );
    assert_eq!(split_words(""), Vec::<String>::new());
}

#[test]
fn unquoting() {
    assert_eq!(unquote("plain"), "plain");
    assert_eq!(unquote("\"a b\""), "a b");
    assert_eq!(unquote("'a \\n b'"), "a \\n b");
    assert_eq!(unquote("\"a\\n\\t\\\\\\\"\""), "a\n\t\\\"");
    assert_eq!(unquote("\"\\x41\\102\""), "AB");
    assert_eq!(unquote("\"a\"b'c'"), "abc");
    assert_eq!(unquote_bytes("\"\\<00 11 fF>\""), vec![0, 0x11, 0xff]);
    assert_eq!(unquote_bytes("\"x\\<0a>y\""), b"x\ny".to_vec());
    assert_eq!(unquote_bytes("\"\\0\""), vec![0]);
}

#[test]
fn keyword_detection() {
    assert_eq!(keyword_split("LIMIT 10"), Some(("LIMIT", "10")));
    assert_eq!(keyword_split("  A_B2  x y "), Some(("A_B2", "x y")));
    assert_eq!(keyword_split("LIMIT"), None);
    assert_eq!(keyword_split("Limit 10"), None);
    assert_eq!(keyword_split("12/0800"), None);
    assert_eq!(keyword_split("LIMIT:10"), None);
}

#[test]
fn from_arg_numbers() {
    assert_eq!(u32::from_arg("10"), Ok(10));
    assert_eq!(u32::from_arg("0x1F"), Ok(31));
    assert_eq!(u32::from_arg("010"), Ok(8));
    assert_eq!(u32::from_arg("0"), Ok(0));
    assert_eq!(u8::from_arg("256"), Err("out of range, bound 255".into()));
    assert_eq!(
        i32::from_arg("-4000000000"),
        Err("out of range, bound -2147483648".into())
    );
    assert_eq!(PacketLen::from_arg("262144"), Ok(AtMost(262144)));
    for big in ["262145", "4294967295", "99999999999999999999999"] {
        assert_eq!(
            PacketLen::from_arg(big),
            Err("out of range, bound 262144".into())
        );
    }
    assert_eq!(
        PacketLen::from_arg("-1"),
        Err("expected unsigned integer".into())
    );
    assert_eq!(PacketLenDelta::from_arg("-14"), Ok(PacketLenDelta(-14)));
    assert_eq!(
        PacketLenDelta::from_arg("-4000000000"),
        Err("out of range, bound -262144".into())
    );
    assert_eq!(
        PacketLenDelta::from_arg("4000000000"),
        Err("out of range, bound 262144".into())
    );
    assert_eq!(u16::from_arg("-1"), Err("expected unsigned integer".into()));
    assert_eq!(
        u64::from_arg("abc"),
        Err("expected unsigned integer".into())
    );
    assert_eq!(usize::from_arg(" 7 "), Ok(7));
    assert_eq!(i32::from_arg("-12"), Ok(-12));
    assert_eq!(i64::from_arg("+5"), Ok(5));
    assert_eq!(i32::from_arg("x"), Err("expected integer".into()));
    assert_eq!(f64::from_arg("1.5e3"), Ok(1500.0));
    assert_eq!(f64::from_arg("-0.25"), Ok(-0.25));
    assert!(f64::from_arg("nan").is_err());
    assert!(f64::from_arg("1.0.0").is_err());
}

#[test]
fn from_arg_bool_string_word_data() {
    for t in ["true", "yes", "1", "on", "TRUE"] {
        assert_eq!(bool::from_arg(t), Ok(true), "{t}");
    }
    for f in ["false", "no", "0", "off"] {
        assert_eq!(bool::from_arg(f), Ok(false), "{f}");
    }
    assert_eq!(bool::from_arg("maybe"), Err("expected boolean".into()));
    assert_eq!(String::from_arg("\"hi there\""), Ok("hi there".into()));
    assert_eq!(Word::from_arg("eth0"), Ok(Word("eth0".into())));
    assert_eq!(Word::from_arg("\"eth0\""), Ok(Word("eth0".into())));
    assert!(Word::from_arg("a b").is_err());
    assert!(Word::from_arg("").is_err());
    assert_eq!(Data::from_arg("\"\\<ab cd>\""), Ok(Data(vec![0xab, 0xcd])));
}

#[test]
fn from_arg_addresses() {
    assert_eq!(
        Ipv4Addr::from_arg("10.0.0.1"),
        Ok(Ipv4Addr::new(10, 0, 0, 1))
    );
    assert_eq!(
        Ipv4Addr::from_arg("10.0.0"),
        Err("expected IP address".into())
    );
    assert_eq!(
        Ipv6Addr::from_arg("2001:db8::1"),
        Ok("2001:db8::1".parse().unwrap())
    );
    assert!(Ipv6Addr::from_arg("zz").is_err());
    let e = EtherAddr::from_arg("00:01:02:03:04:05").unwrap();
    assert_eq!(e.0, [0, 1, 2, 3, 4, 5]);
    assert_eq!(
        EtherAddr::from_arg("00:01"),
        Err("expected Ethernet address".into())
    );
    let p = Ipv4Prefix::from_arg("18.26.4.0/24").unwrap();
    assert_eq!((p.addr, p.len), (Ipv4Addr::new(18, 26, 4, 0), 24));
    let p = Ipv4Prefix::from_arg("18.26.4.0 255.255.255.0").unwrap();
    assert_eq!(p.len, 24);
    assert!(Ipv4Prefix::from_arg("1.2.3.4/33").is_err());
    let p = Ipv6Prefix::from_arg("2001:db8::/32").unwrap();
    assert_eq!(p.len, 32);
    assert_eq!(
        Ipv6Prefix::from_arg("x/1"),
        Err("expected IPv6 prefix".into())
    );
}

#[test]
fn from_arg_units() {
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9 * b.abs().max(1.0);
    for (s, want) in [
        ("1", 1.0),
        ("1.5s", 1.5),
        ("10ms", 0.01),
        ("20us", 20e-6),
        ("5ns", 5e-9),
        ("2min", 120.0),
        ("1h", 3600.0),
        ("1.5 sec", 1.5),
    ] {
        assert!(close(Seconds::from_arg(s).unwrap().0, want), "{s}");
    }
    assert_eq!(
        Seconds::from_arg("1 fortnight"),
        Err("expected time in seconds".into())
    );
    assert!(Seconds::from_arg("-1").is_err());
    assert_eq!(
        std::time::Duration::from_arg("250ms"),
        Ok(std::time::Duration::from_millis(250))
    );
    for (s, want) in [
        ("10Mbps", 1.25e6),
        ("1MBps", 1e6),
        ("100kbps", 12_500.0),
        ("1Gbps", 1.25e8),
        ("1000", 1000.0),
        ("800baud", 100.0),
        ("2KBps", 2000.0),
        ("131072B/s", 131_072.0),
        ("8kb/s", 1000.0),
        ("1kbaud", 125.0),
    ] {
        assert!(close(Bandwidth::from_arg(s).unwrap().0, want), "{s}");
    }
    assert_eq!(
        Bandwidth::from_arg("fast"),
        Err("expected bandwidth".into())
    );
    for (s, want) in [
        ("1000", 1000.0),
        ("10kpps", 1e4),
        ("1Mpps", 1e6),
        ("50Hz", 50.0),
        ("2.5", 2.5),
    ] {
        assert!(close(Rate::from_arg(s).unwrap().0, want), "{s}");
    }
    assert_eq!(Rate::from_arg("10 apples"), Err("expected rate".into()));
}

#[test]
fn args_positional_and_keywords() {
    let mut a = Args::new("5, eth0, LIMIT 10, BURST 2");
    let n: u32 = a.read_mp("N").unwrap();
    let dev: Word = a.read_mp("DEVNAME").unwrap();
    let x: Option<u32> = a.read_p("X").unwrap();
    let limit: Option<u32> = a.read("LIMIT").unwrap();
    let burst: u32 = a.read_m("BURST").unwrap();
    assert_eq!(
        (n, dev.0.as_str(), x, limit, burst),
        (5, "eth0", None, Some(10), 2)
    );
    assert!(a.complete().is_ok());
}

#[test]
fn args_keyword_for_positional_slot() {
    let mut a = Args::new("LENGTH 64, 3");
    // Keyword given for a positional-or-keyword argument, then a positional.
    let len: u32 = a.read_mp("LENGTH").unwrap();
    let c: Option<u32> = a.read_p("COUNT").unwrap();
    assert_eq!(len, 64);
    assert_eq!(c, Some(3)); // positional reads skip arguments already read by keyword
    assert!(a.complete().is_ok());

    let mut a = Args::new("LIMIT 5, 3");
    let c: Option<u32> = a.read_p("COUNT").unwrap();
    assert_eq!(c, None); // a keyword argument stops positional reading
    let l: Option<u32> = a.read("LIMIT").unwrap();
    assert_eq!(l, Some(5));
    assert_eq!(
        a.complete().unwrap_err(),
        vec!["too many arguments".to_string()]
    );

    let mut a = Args::new("3, LENGTH 64");
    let c: u32 = a.read_mp("COUNT").unwrap();
    let len: u32 = a.read_mp("LENGTH").unwrap();
    assert_eq!((c, len), (3, 64));
    assert!(a.complete().is_ok());
}

#[test]
fn args_last_keyword_wins_and_read_all() {
    let mut a = Args::new("ADDR 1.0.0.1, LIMIT 1, ADDR 2.0.0.2, LIMIT 2");
    let l: Option<u32> = a.read("LIMIT").unwrap();
    assert_eq!(l, Some(2));
    let addrs: Vec<Ipv4Addr> = a.read_all("ADDR").unwrap();
    assert_eq!(
        addrs,
        vec![Ipv4Addr::new(1, 0, 0, 1), Ipv4Addr::new(2, 0, 0, 2)]
    );
    assert!(a.complete().is_ok());
}

#[test]
fn args_errors_collected() {
    let mut a = Args::new("abc, FOO 1, 7, 8");
    assert!(a.read_mp::<u32>("LIMIT").is_err());
    assert!(a.read_m::<u32>("LENGTH").is_err());
    let _ = a.read_p::<u32>("X");
    a.error("custom problem");
    assert_eq!(a.errors().len(), 3);
    let e = a.complete().unwrap_err();
    assert_eq!(
        e,
        vec![
            "LIMIT: expected unsigned integer".to_string(),
            "missing mandatory LENGTH argument".to_string(),
            "custom problem".to_string(),
        ]
    );
}

#[test]
fn args_no_false_unknown_keyword_after_an_error() {
    // The element stops at its first bad argument; HIMEM was never read, not unknown.
    let mut a = Args::new("TIMEOUT 0, HIMEM 0");
    assert!(a.read::<u32>("TIMEOUT").is_ok());
    a.error("TIMEOUT: must be positive");
    assert_eq!(
        a.complete().unwrap_err(),
        vec!["TIMEOUT: must be positive".to_string()]
    );
    let mut a = Args::new("TIMEOUT 1, HIMEM 0, 5");
    assert!(a.read::<u32>("TIMEOUT").is_ok());
    assert_eq!(
        a.complete().unwrap_err(),
        vec![
            "unknown keyword 'HIMEM'".to_string(),
            "too many arguments".to_string()
        ]
    );
}

#[test]
fn args_missing_and_rest() {
    let mut a = Args::new("");
    assert!(a.read_mp::<u32>("N").is_err());
    assert_eq!(
        a.complete().unwrap_err(),
        vec!["missing mandatory N argument".to_string()]
    );

    let mut a = Args::new("12/0800, 12/0806 20/0001, -, MTU 100");
    let mtu: Option<u32> = a.read("MTU").unwrap();
    assert_eq!(mtu, Some(100));
    assert_eq!(a.rest(), v(&["12/0800", "12/0806 20/0001", "-"]));
    assert!(a.complete().is_ok());

    // A bare upper-case word is positional.
    let mut a = Args::new("HELLO");
    let s: Option<String> = a.read_p("LABEL").unwrap();
    assert_eq!(s.as_deref(), Some("HELLO"));
    assert!(a.complete().is_ok());
}

#[test]
fn args_read_order_skips_keyword_consumed() {
    let mut a = Args::new("ACTIVE false, 1, 2");
    let active: Option<bool> = a.read("ACTIVE").unwrap();
    let x: u32 = a.read_mp("X").unwrap();
    let y: u32 = a.read_mp("Y").unwrap();
    assert_eq!((active, x, y), (Some(false), 1, 2));
    assert!(a.complete().is_ok());
}
