//! Behaviour tests of Script, DriverManager and ControlSocket against Click's semantics:
//! `print` of handlers, expansions with functions, `run` arguments, Click's limits on jumps,
//! nesting and value sizes, ControlSocket's argument forms, protocol and line limit, and the
//! fuzz corpora.

use std::path::Path;

use sluice_testkit::{fuzz_seeds, router, Kit, TempDir};

/// Runs `conf` (with `OUT` replaced by a file path) and returns what it printed there.
fn printed(name: &str, conf: &str) -> String {
    let d = TempDir::new(&format!("script-{name}"));
    let out = d.file("out");
    let mut r = router(&conf.replace("OUT", &out));
    r.run_until_idle();
    std::fs::read_to_string(&out).unwrap_or_default()
}

#[test]
fn print_calls_read_handlers_like_click() {
    // DriverManager(print e.count): the handler's value, not its name.
    let got = printed(
        "print",
        "InfiniteSource(LIMIT 7, STOP true) -> e :: Counter -> Discard; \
         DriverManager(wait_stop, print >>OUT e.count, print >>OUT \"e.count\", \
                       print >>OUT '\"e.count\"', set x e.count, print >>OUT $x, \
                       print >>OUT $($x), printn >>OUT e.count, printn >>OUT add 1 2, \
                       print >>OUT, print >>OUT sprintf \"%03d|\" 5, stop)",
    );
    assert_eq!(got, "7\ne.count\n\"e.count\"\ne.count\n7\n73\n005|\n");
}

#[test]
fn expansions_take_functions_and_parameters() {
    // Click's test/handlers/expansion-01 and test/standard/Script-04, written to a file.
    let got = printed(
        "expand",
        "Script(print >>OUT $(add 1 2), set i add, print >>OUT $($i 3 4), \
                print >>OUT $($(s.run).name), print >>OUT $($(j.run).name), \
                print >>OUT $(min 10 6 20), print >>OUT $(max -1 6 3), \
                print >>OUT $(div 75 2.5 5), print >>OUT $(idiv 60 2 5), \
                print >>OUT $(htonl $(ntohl 6)), write set foovar foo bar baz, \
                print >>OUT $(shift foovar), print >>OUT $(get foovar), \
                print >>OUT $(if $(eq 10 0xA) yes no), print >>OUT $(not $(lt 9 8)), \
                print >>OUT $(sprintf \"%05x\" 127), print >>OUT $(length abcde), \
                print >>OUT $(unquote \"a  b\"), print >>OUT $(in b a b c), \
                print >>OUT $(sub.run x y), print >>OUT \"[$x] '$i'\", print >>OUT $(c.count), \
                stop); \
         j :: Script(TYPE PASSIVE, return sub); \
         s :: Script(TYPE PASSIVE, return i2); \
         sub :: Script(TYPE PASSIVE, return \"$# $2 $args\"); \
         i2 :: Idle -> c :: Counter -> Discard",
    );
    assert_eq!(
        got,
        "3\n7\ni2\nsub\n6\n6\n6\n6\n6\nfoo\nbar baz\nyes\ntrue\n0007f\n5\n\
         a  b\ntrue\n\"2 y x y\"\n[$x] 'add'\n0\n"
    );
}

#[test]
fn run_handler_arguments_and_quoting() {
    // Click's test/standard/Script-02: `$1` keeps its quotes; returnq removes them.
    let d = TempDir::new("script-run");
    let file = d.file("f");
    let mut r = router(&format!(
        "s0 :: Script(printn >{file} $(s.run \"\\<0a 09 01>\"), stop); \
         s :: Script(TYPE PASSIVE, returnq $1)"
    ));
    r.run_until_idle();
    assert_eq!(std::fs::read(&file).unwrap(), b"\n\t\x01");
    r.write_path("s.run", "'a b' c").unwrap();
    assert_eq!(r.read_path("s.run").unwrap(), "a b\n");
    assert_eq!(r.read_path_param("s.add", Some("1 1")).unwrap(), "2\n");
    assert_eq!(
        r.read_path_param("s.get", Some("args")).unwrap(),
        "'a b' c\n"
    );
    assert!(r.read_path_param("s.cat", Some("/etc/hostname")).is_err());
    // A huge argument number is past the last word at once (found by fuzzing: it counted
    // to 2.2 trillion).
    let mut r = router("s :: Script(TYPE PASSIVE, return \"[$2][$2222222222222]\")");
    r.write_path("s.run", "a b").unwrap();
    assert_eq!(r.read_path("s.run").unwrap(), "\"[b][]\"\n");
}

#[test]
fn jumps_nesting_and_sizes_are_bounded() {
    // Click's test/standard/Script-03: a loop without a wait is given up.
    let mut r = router("s0 :: Script(label a, goto a); Script(wait 1, stop)");
    r.run_until_idle();
    assert_eq!(r.read_path("s0.done").unwrap(), "true\n");

    // Doubling a variable stops at the size bound instead of exhausting memory.
    let mut r = router("s :: Script(set a 1, label l, setq a \"$a$a\", goto l)");
    r.run_until_idle();
    assert_eq!(r.read_path("s.done").unwrap(), "true\n");
    let a = r.read_path_param("s.get", Some("a")).unwrap();
    assert_eq!(a.len() - 1, 1 << 23);

    // Deep nesting: ten levels expand as in Click, deeper ones stay text; memory and time
    // stay linear (100,000 levels).
    let nest = |n: usize| format!("print >>OUT {}1{}", "$(add 1 ".repeat(n), ")".repeat(n));
    let got = printed(
        "nest",
        &format!("Script({}, {}, stop)", nest(10), nest(100_000)),
    );
    let mut lines = got.lines();
    assert_eq!(lines.next(), Some("11"));
    assert!(lines.next().is_some());
}

#[test]
fn configuration_errors_follow_click() {
    for (conf, msg) in [
        ("Script(frobnicate 3)", "syntax error at 'frobnicate'"),
        ("Script(goto nowhere)", "no such label 'nowhere'"),
        ("Script(set x)", "syntax error at 'set'"),
        ("Script(label a b)", "syntax error at 'label'"),
        ("Script(pause x)", "syntax error at 'pause'"),
        ("Script(wait 3q)", "syntax error at 'wait'"),
        ("Script(end now)", "syntax error at 'end'"),
        ("Script(TYPE SOMETIMES)", "bad TYPE"),
        (
            "Idle -> Script(TYPE ACTIVE) -> Discard",
            "ports allowed only on PACKET scripts",
        ),
        ("Script(TYPE PACKET)", "PACKET script must have inputs"),
        ("Script(TYPE SIGNAL)", "bad signal number"),
        ("Script(TYPE SIGNAL INT WINCH)", "bad signal number"),
    ] {
        let e = Kit::sim().error(conf);
        assert!(e.contains(msg), "{conf}: {e}");
    }
}

#[test]
fn goto_conditions_labels_and_exports() {
    let got = printed(
        "goto",
        "s :: Script(export v 5, set i 0, label top, set i $(add $i 1), \
                     goto top $(lt $i $v), print >>OUT $i, goto done $(eq $i 5), \
                     print >>OUT \"not here\", label done, write c.nope, print >>OUT $?, \
                     write s.set v 9, print >>OUT $v, goto stop); \
         Idle -> c :: Counter -> Discard",
    );
    assert_eq!(got, "5\n-22\n9\n");
}

#[test]
fn packet_scripts_pick_outputs_like_click() {
    // The return value names the output, `end` means output 0, `exit` (or an output that
    // does not exist) drops the packet and counts it; `$input` is the input port.
    let mut r = router(
        "InfiniteSource(LIMIT 7, STOP true) -> s :: Script(TYPE PACKET, init i 0, \
             set i $(add $i 1), goto x $(eq $(mod $i 3) 0), goto e $(eq $i 7), \
             return $(add $(mod $i 2) $input), label x, exit, label e, end); \
         Idle -> [1] s; s[0] -> a :: Counter -> Discard; s[1] -> b :: Counter -> Discard; \
         InfiniteSource(LIMIT 2, STOP true) -> p :: Script(return 5) -> d :: Counter -> Discard",
    );
    r.run_until_idle();
    // i = 1 and 5 go to output 1; 2 and 4 to output 0; 3 and 6 exit; 7 ends (output 0).
    assert_eq!(r.read_path("a.count").unwrap(), "3\n");
    assert_eq!(r.read_path("b.count").unwrap(), "2\n");
    assert_eq!(r.read_path("s.drops").unwrap(), "2\n");
    assert_eq!(r.read_path("d.count").unwrap(), "0\n");
    assert_eq!(r.read_path("p.drops").unwrap(), "2\n");
}

/// Runs a fuzz body over its corpus and over cheap deterministic mutations of every seed.
fn run_corpus(name: &str, body: fn(&[u8])) {
    let seeds = fuzz_seeds(name);
    assert!(seeds.len() >= 5, "corpus {name} has too few seeds");
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    for seed in seeds {
        body(&seed);
        for _ in 0..40 {
            let mut m = seed.clone();
            for _ in 0..1 + next(3) {
                let i = next(m.len().max(1));
                const CHARS: &[u8] = b" $()\"'{},\\/*-0123456789abgoltq";
                let c = CHARS[next(CHARS.len())];
                match next(3) {
                    0 if i < m.len() => m[i] = c,
                    1 => m.insert(i.min(m.len()), c),
                    _ if i < m.len() => {
                        m.remove(i);
                    }
                    _ => m.push(c),
                }
            }
            body(&m);
        }
    }
}

#[test]
fn script_fuzz_corpus() {
    run_corpus("script", sluice_elements::script::fuzzing::script);
}

#[test]
fn control_socket_fuzz_corpus() {
    run_corpus(
        "control_socket",
        sluice_elements::script::fuzzing::control_socket,
    );
}

#[test]
fn control_socket_arguments_follow_click() {
    let d = TempDir::new("script-csargs");
    let long = "x".repeat(120);
    for (conf, msg) in [
        (
            "ControlSocket(tcp, x)".to_string(),
            "PORT requires TCP port",
        ),
        (
            "ControlSocket(tcp, 0+)".to_string(),
            "PORT requires TCP port",
        ),
        (
            "ControlSocket(sctp, 1)".to_string(),
            "unknown socket type 'sctp'",
        ),
        (
            "ControlSocket(unix, /tmp/{long})".replace("{long}", &long),
            "filename too long",
        ),
        (
            "ControlSocket(tcp, 0, PROXY nope)".to_string(),
            "PROXY: no element named 'nope'",
        ),
        ("ControlSocket(tcp)".to_string(), "PORT"),
    ] {
        let e = Kit::sim().error(&conf);
        assert!(e.contains(msg), "{conf}: {e}");
    }
    // Lower-case types, service names, `N+` and every keyword are accepted.
    let path = d.file("s");
    let mut r = router(&format!(
        "a :: ControlSocket(tcp, 0, READONLY true, VERBOSE false, LOCALHOST true, RETRIES 0, \
                            RETRY_WARNINGS false, PROXY b); \
         b :: ControlSocket(unix, \"{path}\"); c :: ControlSocket(TCP, 42100+)"
    ));
    assert_eq!(r.read_path("b.filename").unwrap(), format!("{path}\n"));
    assert!(
        r.read_path("c.port")
            .unwrap()
            .trim()
            .parse::<u16>()
            .unwrap()
            >= 42100
    );
    r.cleanup();
    assert!(!Path::new(&path).exists());
}

#[test]
fn control_socket_paths_and_busy_ports() {
    let d = TempDir::new("script-cspath");
    // A regular file is never replaced.
    let file = d.join("f");
    std::fs::write(&file, "keep").unwrap();
    let e = Kit::sim()
        .build(&format!("ControlSocket(unix, {})", file.display()))
        .err()
        .expect("bind fails");
    assert!(e.contains("bind: Address already in use"), "{e}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");
    // A socket somebody listens on is not taken over; a stale one is replaced.
    let live = d.join("live");
    let holder = std::os::unix::net::UnixListener::bind(&live).unwrap();
    assert!(Kit::sim()
        .build(&format!("ControlSocket(unix, {})", live.display()))
        .is_err());
    drop(holder);
    let mut r = Kit::sim()
        .build(&format!("ControlSocket(unix, {})", live.display()))
        .unwrap_or_else(|e| panic!("stale socket not replaced: {e}"));
    r.cleanup();
    // A busy port with RETRIES: a retry a second later, then the router stops.
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port();
    let mut r = router(&format!(
        "ControlSocket(TCP, {port}, RETRIES 1, RETRY_WARNINGS false); \
         InfiniteSource(LIMIT -1, BURST 1, ACTIVE false) -> Discard"
    ));
    let t0 = r.clock().now();
    r.run_until_idle();
    assert_eq!((r.clock().now() - t0).0, 1_000_000_000);
}
