use super::*;

fn parse(s: &str) -> FlatConfig {
    match parse_config(s, "t.click", &[]) {
        Ok(c) => c,
        Err(d) => panic!(
            "unexpected errors: {:?}",
            d.iter().map(|d| d.to_string()).collect::<Vec<_>>()
        ),
    }
}

fn errs(s: &str) -> Vec<String> {
    match parse_config(s, "t.click", &[]) {
        Ok(c) => panic!("expected errors, got {c:?}"),
        Err(d) => d.iter().map(|d| d.to_string()).collect(),
    }
}

/// Connections as "a[p]->[q]b" strings, sorted.
fn conns(c: &FlatConfig) -> Vec<String> {
    let mut v: Vec<String> = c
        .connections
        .iter()
        .map(|k| {
            format!(
                "{}[{}]->[{}]{}",
                c.elements[k.from].name, k.from_port, k.to_port, c.elements[k.to].name
            )
        })
        .collect();
    v.sort();
    v
}

fn elem<'a>(c: &'a FlatConfig, name: &str) -> &'a FlatElement {
    &c.elements[c
        .find(name)
        .unwrap_or_else(|| panic!("no element {name} in {c:?}"))]
}

/// Equality ignoring landmarks and the order of connections.
fn same(a: &FlatConfig, b: &FlatConfig) -> bool {
    let ea: Vec<_> = a
        .elements
        .iter()
        .map(|e| (&e.name, &e.class, &e.config))
        .collect();
    let eb: Vec<_> = b
        .elements
        .iter()
        .map(|e| (&e.name, &e.class, &e.config))
        .collect();
    let mut ca: Vec<_> = a
        .connections
        .iter()
        .map(|c| (c.from, c.from_port, c.to, c.to_port))
        .collect();
    let mut cb: Vec<_> = b
        .connections
        .iter()
        .map(|c| (c.from, c.from_port, c.to, c.to_port))
        .collect();
    ca.sort_unstable();
    cb.sort_unstable();
    ea == eb && ca == cb && a.requirements == b.requirements
}

#[test]
fn declarations_and_connections() {
    let c = parse(
        "// trivial router\nsrc :: FromDevice(eth0);\nctr :: Counter;\nsink :: Discard;\nsrc -> ctr;\nctr -> sink;\n",
    );
    assert_eq!(c.elements.len(), 3);
    assert_eq!(elem(&c, "src").class, "FromDevice");
    assert_eq!(elem(&c, "src").config, "eth0");
    assert_eq!(elem(&c, "sink").landmark.to_string(), "t.click:4");
    assert_eq!(conns(&c), vec!["ctr[0]->[0]sink", "src[0]->[0]ctr"]);
}

#[test]
fn anonymous_elements_and_chains() {
    let c = parse("FromDevice(eth0) -> Counter -> Discard");
    let names: Vec<_> = c.elements.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, vec!["FromDevice@1", "Counter@2", "Discard@3"]);
    assert_eq!(conns(&c).len(), 2);
    let c = parse("src :: Idle; src -> Counter -> Discard");
    assert!(c.find("Counter@2").is_some());
}

#[test]
fn ports_and_multi_declarations() {
    let c = parse("a, b :: Tee(2); c :: Discard\n a [1] -> [0] b; b[1]->[2]c a -> c");
    assert_eq!(elem(&c, "a").config, "2");
    assert_eq!(elem(&c, "b").class, "Tee");
    assert_eq!(conns(&c), vec!["a[0]->[0]c", "a[1]->[0]b", "b[1]->[2]c"]);
}

#[test]
fn declaration_inside_chain() {
    let c = parse("x :: Idle; d :: Discard; x -> c :: Counter(1) -> d; c [1] -> d;");
    assert_eq!(elem(&c, "c").class, "Counter");
    assert_eq!(conns(&c), vec!["c[0]->[0]d", "c[1]->[0]d", "x[0]->[0]c"]);
}

#[test]
fn forward_reference_is_allowed() {
    let c = parse("a :: Idle; a -> b; b :: Discard;");
    assert_eq!(conns(&c), vec!["a[0]->[0]b"]);
}

#[test]
fn config_strings_raw() {
    let c = parse(
        "p :: Print(\"a, (b)\" // comment\n , 'x)y', /* c */ [1, 2], {3}) ; q :: Strip(14 /* bytes */);",
    );
    assert_eq!(elem(&c, "p").config, "\"a, (b)\" \n , 'x)y',  [1, 2], {3}");
    assert_eq!(elem(&c, "q").config, "14");
    assert_eq!(args::split_args(&elem(&c, "p").config).len(), 4);
}

#[test]
fn comments_and_line_directives() {
    let c = parse("/* multi\nline */ a :: Idle; # 10 \"other.click\"\nb :: Discard; a -> b");
    assert_eq!(elem(&c, "a").landmark.line, 2);
    assert_eq!(elem(&c, "b").landmark.to_string(), "other.click:10");
    // Inside a configuration string too (Click's test/tools/lexer-08); a `#` elsewhere in a
    // line is text.
    let c = parse("m :: Idle(\n# 100 \"foobar.click\"\n\"test\" #1);\nm2 :: Idle;");
    assert_eq!(elem(&c, "m").landmark.to_string(), "t.click:1");
    assert_eq!(elem(&c, "m").config, "\"test\" #1");
    assert_eq!(elem(&c, "m2").landmark.to_string(), "foobar.click:101");
    // cpp's flags after the file name.
    let c = parse("# 1 \"A\"\n\n# 1 \"B\" 1\nx :: Idle;\n# 5 \"A\" 2\ny :: Idle;");
    assert_eq!(elem(&c, "x").landmark.to_string(), "B:1");
    assert_eq!(elem(&c, "y").landmark.to_string(), "A:5");
}

/// Click's braced references: `${a[N]}` is the Nth word (from 0, empty past the end; N may
/// itself be a variable), `${a-DEFAULT}` stands for DEFAULT when `a` is not defined, and an
/// undefined reference is left as written (test/compound/variables-01).
#[test]
fn braced_variables_index_words_and_default() {
    let c = parse(
        "define($a A B C, $n 2);\n\
         x0 :: Idle(${a[0]}); x2 :: Idle(${a[$n]}); x3 :: Idle(\"${a[3]}\");\n\
         d :: Idle(${nope-none here}, ${a-unused}); u :: Idle(${nope}, ${nope[$n]});",
    );
    assert_eq!(elem(&c, "x0").config, "A");
    assert_eq!(elem(&c, "x2").config, "C");
    assert_eq!(elem(&c, "x3").config, "\"\"");
    assert_eq!(elem(&c, "d").config, "none here, A B C");
    assert_eq!(elem(&c, "u").config, "${nope}, ${nope[2]}");
}

/// Click lists a scope's declarations together and expands the compounds among them
/// afterwards, in order, so the elements of a compound come after every element declared
/// beside it.
#[test]
fn flat_elements_follow_clicks_expansion_order() {
    let c = parse(
        "elementclass In { input -> p :: Print(in) -> output }\n\
         elementclass Out { input -> a :: Print(a) -> In -> b :: Print(b) -> output }\n\
         s :: Idle -> x :: Out -> y :: Out -> d :: Discard;",
    );
    let names: Vec<&str> = c.elements.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        ["s", "d", "x/a", "x/b", "x/In@2/p", "y/a", "y/b", "y/In@2/p"]
    );
    assert_eq!(conns(&c).len(), 7);
}

/// A name used as a class that nothing defines stays a class, in every scope (Click's
/// lexer-01).
#[test]
fn unknown_class_names_cannot_name_elements() {
    let e = errs("elementclass Foo { A -> B; }\nA :: Idle;");
    assert_eq!(e, ["t.click:2: class 'A' used as element name"]);
    let e = errs("elementclass Foo { A :: A -> B; }\nA :: Idle;");
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(parse_config("elementclass Foo { A :: AA -> B; }\nA :: Idle;", "t", &[]).is_ok());
    // An anonymous name never takes the name of a class in use (a fuzzing find: `8@3` the
    // class, then the third element of class `8`); the flattened form parses again.
    let c = parse("A@3 8@3 8");
    assert!(parse_config(&unparse(&c), "flat", &[]).is_ok());
}

#[test]
fn require_and_define() {
    let c = parse(
        "require(package foo, sluice); define($DEV eth0, $N 5);\nFromDevice($DEV) -> Queue(${N}0) -> ToDevice('$DEV')",
    );
    assert_eq!(c.requirements, vec!["package foo", "sluice"]);
    assert_eq!(elem(&c, "FromDevice@1").config, "eth0");
    assert_eq!(elem(&c, "Queue@2").config, "50");
    assert_eq!(elem(&c, "ToDevice@3").config, "'$DEV'");
}

#[test]
fn malformed_requirements_are_errors_as_in_click() {
    for bad in [
        "require(foo bar);",
        "require(a b c);",
        "require(package);",
        "require(a(b], c)d e);",
    ] {
        let err = parse_config(bad, "t", &[]).unwrap_err();
        assert!(
            err.iter()
                .any(|d| d.message == "syntax error at requirement"),
            "{bad}: {err:?}"
        );
    }
    let c = parse("require(compact_config, a(b], c)d, package \"c d\");");
    let flat = unparse(&c);
    assert!(parse_config(&flat, "flat", &[]).is_ok(), "{flat}");
}

#[test]
fn command_line_defines_override() {
    let text = "define($DEV eth0); FromDevice($DEV) -> Discard";
    let c = parse_config(text, "x", &[("DEV".into(), "eth1".into())]).unwrap();
    assert_eq!(c.elements[0].config, "eth1");
    let c = parse_config(
        "FromDevice($IF, $UNK) -> Discard",
        "x",
        &[("$IF".into(), "eth2".into())],
    )
    .unwrap();
    assert_eq!(c.elements[0].config, "eth2, $UNK");
}

#[test]
fn compound_basic() {
    let c = parse(
        "elementclass Foo { input -> q :: Queue(10) -> Unqueue -> output }\n\
         src :: Idle; f :: Foo; src -> f -> Discard;",
    );
    assert!(c.find("f/q").is_some());
    assert!(c.find("f/Unqueue@2").is_some());
    assert_eq!(
        conns(&c),
        vec![
            "f/Unqueue@2[0]->[0]Discard@3",
            "f/q[0]->[0]f/Unqueue@2",
            "src[0]->[0]f/q"
        ]
    );
}

#[test]
fn compound_parameters_and_keywords() {
    let c = parse(
        "elementclass Shaped { $rate, BURST $b | input -> Queue($b) -> BandwidthShaper($rate) -> output }\n\
         Idle -> s :: Shaped(10Mbps, BURST 20) -> Discard; Idle -> t :: Shaped(1kbps) -> Discard;",
    );
    assert_eq!(elem(&c, "s/Queue@1").config, "20");
    assert_eq!(elem(&c, "s/BandwidthShaper@2").config, "10Mbps");
    assert_eq!(elem(&c, "t/Queue@1").config, "");
}

#[test]
fn nested_compounds() {
    let c = parse(
        "elementclass In { $x | input -> Paint($x) -> output }\n\
         elementclass Out { $y | input -> i :: In($y) -> [0]output; input[1] -> [1]output }\n\
         a :: Idle; b :: Idle; o :: Out(7); a -> o; b -> [1]o; o -> Discard; o[1] -> Discard;",
    );
    assert_eq!(elem(&c, "o/i/Paint@1").config, "7");
    let cs = conns(&c);
    assert!(cs.contains(&"a[0]->[0]o/i/Paint@1".to_string()), "{cs:?}");
    assert!(
        cs.iter().any(|s| s.starts_with("b[0]->[0]Discard")),
        "{cs:?}"
    );
    assert!(
        cs.iter()
            .any(|s| s.starts_with("o/i/Paint@1[0]->[0]Discard")),
        "{cs:?}"
    );
}

#[test]
fn compound_inner_classes_and_scoping() {
    let c = parse(
        "elementclass A { elementclass B { input -> Counter -> output } input -> B -> output }\n\
         Idle -> A -> Discard;",
    );
    assert!(c.find("A@2/B@1/Counter@1").is_some(), "{:?}", c.elements);
}

#[test]
fn compound_passthrough() {
    let c = parse("elementclass P { input -> output } a :: Idle; b :: Discard; a -> P -> b;");
    assert_eq!(conns(&c), vec!["a[0]->[0]b"]);
}

#[test]
fn anonymous_compound_inline() {
    let c = parse("Idle -> { input -> Counter -> output } -> Discard");
    assert_eq!(c.elements.len(), 3);
    assert_eq!(conns(&c).len(), 2);
    let c = parse("x :: { input -> Counter -> output }; Idle -> x -> Discard");
    assert!(c.elements.iter().any(|e| e.name == "x/Counter@1"));
}

#[test]
fn overloading_by_args_and_ports() {
    let c = parse(
        "elementclass Foo { input -> A -> output || $a | input -> B($a) -> output || $a | input -> C($a) -> output; input[1] -> output }\n\
         Idle -> f0 :: Foo -> Discard; Idle -> f1 :: Foo(1) -> Discard; Idle -> [1] f2 :: Foo(2) -> Discard; Idle -> f2;",
    );
    assert!(c.find("f0/A@1").is_some());
    assert!(c.find("f1/B@1").is_some());
    assert!(c.find("f2/C@1").is_some());
}

#[test]
fn ellipsis_extension_and_synonyms() {
    let c = parse(
        "elementclass Foo { input -> A -> output }\n\
         elementclass Foo { $x | input -> B($x) -> output || ... }\n\
         elementclass Bar Foo; elementclass Prim Counter;\n\
         Idle -> a :: Foo -> b :: Bar(3) -> p :: Prim(1) -> Discard;\n\
         elementclass ARPQuerier { $a, $b, $c | input -> ARPQuerier($a, $b) -> output || ... }\n\
         Idle -> q :: ARPQuerier(1.0.0.1, 00:01:02:03:04:05) -> Discard; Idle -> r :: ARPQuerier(1, 2, 3) -> Discard",
    );
    assert!(c.find("a/A@1").is_some());
    assert_eq!(elem(&c, "b/B@1").config, "3");
    assert_eq!(elem(&c, "p").class, "Counter");
    assert_eq!(elem(&c, "q").class, "ARPQuerier");
    assert_eq!(elem(&c, "r/ARPQuerier@1").config, "1, 2");
}

#[test]
fn rest_parameter() {
    let c = parse("elementclass V { $a, __REST__ $r | input -> X($a; $r) -> output } Idle -> V(1, 2, 3) -> Discard");
    assert_eq!(c.elements[2].config, "1; 2, 3");
}

#[test]
fn element_groups() {
    let c = parse(
        "a :: Idle; d :: Discard; a -> ( [0] -> b :: Counter; c :: Counter -> [0] ) -> d; b -> c;",
    );
    assert_eq!(conns(&c), vec!["a[0]->[0]b", "b[0]->[0]c", "c[0]->[0]d"]);
}

#[test]
fn double_arrow_is_connection() {
    let c = parse("a :: Idle; b :: Discard; a => b");
    assert_eq!(conns(&c), vec!["a[0]->[0]b"]);
}

#[test]
fn error_collection_with_lines() {
    let e =
        errs("a :: Idle;\nb :: Discard\nc :: Counter;\nc :: Counter;\na -> -> b;\nx :: Foo(;\n");
    assert!(
        e.iter()
            .any(|m| m == "t.click:4: redeclaration of element 'c'"),
        "{e:?}"
    );
    assert!(
        e.iter().any(|m| m == "t.click:5: syntax error near '->'"),
        "{e:?}"
    );
    assert!(e.len() >= 3, "{e:?}");
}

/// A million missing ports make a thousand errors and a count, not a million lines.
#[test]
fn errors_are_bounded() {
    let e = errs("a :: Idle; d :: Discard;\na -> ( [150000] -> d; ) -> d;\n");
    assert_eq!(e.len(), 1001, "{:?}", &e[..3]);
    assert_eq!(e[0], "t.click:2: '<anonymous group>' input 0 missing");
    assert_eq!(e[1000], "t.click:2: too many errors: 299001 more not shown");
}

#[test]
fn error_undeclared_and_syntax() {
    let e = errs("a :: Idle;\na -> nosuch;\nb :: Discard :: x;\n");
    assert!(
        e.iter()
            .any(|m| m == "t.click:2: undeclared element 'nosuch'"),
        "{e:?}"
    );
    assert!(
        e.iter()
            .any(|m| m.starts_with("t.click:3: syntax error near '::'")),
        "{e:?}"
    );
    let e = errs("a [1];\nb :: X(\n");
    assert!(e.len() >= 2, "{e:?}");
    let e = errs("a :: X; a -> [ b");
    assert!(
        e.iter()
            .any(|m| m.contains("port number should be integer")),
        "{e:?}"
    );
    let e = errs("a :: X; a -> [ ;");
    assert!(
        e.iter().any(|m| m.contains("expected port number")),
        "{e:?}"
    );
}

#[test]
fn error_compound_misuse() {
    let e = errs("elementclass F { $a | input -> X($a) -> output }\nIdle -> F -> Discard;");
    assert!(
        e.iter()
            .any(|m| m.contains("t.click:2: wrong number of arguments")),
        "{e:?}"
    );
    // Inside its own definition a class name means the previous definition (here the
    // primitive R): no recursion is possible.
    let c = parse("elementclass R { input -> R -> output }\nIdle -> R -> Discard;");
    assert_eq!(elem(&c, "R@2/R@1").class, "R");
    let e = errs("elementclass G { x :: Counter; x -> input; output -> x }");
    assert_eq!(
        e,
        vec![
            "t.click:1: 'G' pseudoelement 'input' may only be used as output",
            "t.click:1: 'G' pseudoelement 'output' may only be used as input",
        ]
    );
    let e = errs("elementclass H { input -> output }\nIdle -> [2] H;");
    assert_eq!(
        e,
        vec![
            "t.click:2: 'H@2' output 0 unused",
            "t.click:2: 'H@2' input 0 unused",
            "t.click:2: 'H@2' has no input 2",
        ]
    );
    let e = errs("elementclass K { $a, $a | input -> output }");
    assert_eq!(e, vec!["t.click:1: parameter '$a' multiply defined"]);
}

#[test]
fn click_overloading_and_redefinition() {
    // The inner A is the previous definition of A.
    let c = parse(
        "elementclass A { input -> Paint(1) -> output }\n\
         elementclass A { input -> A -> Paint(2) -> output }\n\
         Idle -> A -> Discard;",
    );
    assert_eq!(elem(&c, "A@2/A@1/Paint@1").config, "1");
    assert_eq!(elem(&c, "A@2/Paint@2").config, "2");
    // A primitive redefined in terms of itself.
    let c = parse("elementclass Discard { input -> Counter -> Discard }\nIdle -> Discard;");
    assert_eq!(elem(&c, "Discard@2/Discard@2").class, "Discard");
    assert_eq!(elem(&c, "Discard@2/Counter@1").class, "Counter");
}

#[test]
fn long_compound_chains_expand() {
    let n = 10_000;
    let mut s = String::from("elementclass A0 { input -> Counter -> output }\n");
    for i in 1..n {
        s.push_str(&format!(
            "elementclass A{i} {{ input -> A{} -> output }}\n",
            i - 1
        ));
    }
    s.push_str(&format!("Idle -> a :: A{} -> Discard;", n - 1));
    let c = parse(&s);
    assert_eq!(c.elements.len(), 3);
    assert_eq!(conns(&c).len(), 2);
    assert!(c.elements[2].name.ends_with("/A0@1/Counter@1"));
}

#[test]
fn formals_are_lexically_scoped() {
    // Click's test/tools/lexer-02: Bar sees Foo's $a, not the $a of Baz that uses it.
    let c = parse(
        "elementclass Foo { $a | elementclass Bar { $b | DriverManager($a); }\n\
         elementclass Baz { $a | Idle; Bar($a); } Baz(other); }\nFoo(stop);",
    );
    assert_eq!(elem(&c, "Foo@1/Baz@1/Bar@2/DriverManager@1").config, "stop");
}

#[test]
fn click_declaration_errors() {
    let e = errs("define($a 1);\ndefine($a 2);\nIdle -> Discard;");
    assert_eq!(e, vec!["t.click:2: parameter '$a' multiply defined"]);
    let e = errs("elementclass C { $x | define($x 1); input -> output }");
    assert_eq!(e, vec!["t.click:1: parameter '$x' multiply defined"]);
    let e = errs("c :: Idle;\nc :: Discard;");
    assert_eq!(
        e,
        vec![
            "t.click:2: redeclaration of element 'c'",
            "t.click:1: element 'c' previously declared here",
        ]
    );
    let e = errs("elementclass Foo { Idle -> Discard }\nFoo :: Foo;");
    assert_eq!(e, vec!["t.click:2: class 'Foo' used as element name"]);
    let classes = |n: &str| n == "Idle";
    let e =
        crate::parse_config_with_classes("Idle :: Idle;", "t.click", &[], &classes).unwrap_err();
    assert_eq!(
        e[0].to_string(),
        "t.click:1: class 'Idle' used as element name"
    );
    // A bare unknown word at the top level is an undeclared element (Click's
    // test/userlevel/uhotswap-01); in a compound body it names a class.
    let classes = |n: &str| n == "Idle" || n == "Discard";
    let parse = |t: &str| crate::parse_config_with_classes(t, "t.click", &[], &classes);
    let e = parse("Idle -> Pofdskaofjdsajfdsa;").unwrap_err();
    assert_eq!(
        e[0].to_string(),
        "t.click:1: undeclared element 'Pofdskaofjdsajfdsa'"
    );
    let flat = parse(
        "elementclass F { input -> Foo -> output }
Idle -> F -> Discard;",
    )
    .unwrap();
    assert!(flat.elements.iter().any(|e| e.class == "Foo"));
    assert!(
        parse("Idle -> Foo(1) -> Discard;").is_ok(),
        "with a configuration, a class"
    );
    let e = errs("Idle -> [99999999999] Discard;");
    assert_eq!(e, vec!["t.click:1: port number 99999999999 out of range"]);
    let e = errs("Idle -> [x] Discard;");
    assert_eq!(
        e,
        vec!["t.click:1: syntax error: port number should be integer"]
    );
}

#[test]
fn unconnected_compound_ports_are_errors() {
    let e = errs("elementclass C { input -> Discard }\nc :: C;\nIdle -> Discard;");
    assert_eq!(e, vec!["t.click:2: 'c' input 0 unused"]);
    let e = errs("elementclass C { Idle -> output }\nc :: C;");
    assert_eq!(e, vec!["t.click:2: 'c' output 0 unused"]);
    let e = errs("elementclass C { input -> Discard }\nc :: C;\nIdle -> c; Idle -> [1] c;");
    assert_eq!(e, vec!["t.click:2: 'c' has no input 1"]);
    let e = errs("elementclass C { input -> Discard }\nc :: C;\nIdle -> c -> Discard;");
    assert_eq!(e, vec!["t.click:2: 'c' has no output 0"]);
    let e = errs("elementclass C { input[1] -> output }");
    assert_eq!(e, vec!["t.click:1: 'C' input 0 missing"]);
}

#[test]
fn port_lists_and_connection_groups() {
    // Click's test/tools/lexer-04 and lexer-05.
    let c = parse("a, b, c :: Idle; a => b, c, [0,1] a;");
    assert_eq!(
        conns(&c),
        vec!["a[0]->[0]b", "a[1]->[0]c", "a[2]->[0]a", "a[3]->[1]a"]
    );
    let c = parse("a, b :: Idle; a -> { -> } -> b; a [1] -> { [0] -> [0] } -> [1] b;");
    assert_eq!(conns(&c), vec!["a[0]->[0]b", "a[1]->[1]b"]);
    let e = errs("a, b, c, d :: Idle;\na [0,1] => [0,1,2] b;\nc [] => [] d;");
    assert_eq!(
        e,
        vec![
            "t.click:2: connection mismatch: 2 outputs connected to 3 inputs",
            "t.click:3: at most one expandable port allowed per connection",
        ]
    );
    let e = errs("a, b :: Idle;\n[1] a -> b;\nb [1];");
    assert_eq!(
        e,
        vec![
            "t.click:2: input ports ignored at start of chain",
            "t.click:3: output ports ignored at end of chain",
        ]
    );
    let e = errs("a, b :: Idle;\na [0,1,2] -> [0,1,2] b;");
    assert_eq!(
        e,
        vec!["t.click:2: syntax error: many-to-many connections require '=>'"]
    );
    let want = vec!["a[0]->[0]c", "a[1]->[0]b", "a[2]->[0]d"];
    for conf in [
        "a, b, c, d :: Idle; a [0,1,2] => c, b, d;",
        "a, b, c, d :: Idle; a [0-2] => ( -> c ), ( -> b ), d;",
        "a, d :: Idle; a => (-> c :: Idle), (-> b :: Idle), d;",
        "elementclass Foo { a, b, c, d :: Idle; a [0,1,2] => c, b, d; } Foo;",
    ] {
        let c = parse(conf);
        let cs: Vec<String> = conns(&c)
            .into_iter()
            .map(|s| s.replace("Foo@1/", ""))
            .filter(|s| s.starts_with("a["))
            .collect();
        assert_eq!(cs, want, "{conf}");
    }
    let c = parse(
        "analyzer, x1, x2 :: Idle;\nx1 -> analyzer -> x2;\n\
         c :: Idle => [1] analyzer [1], (-> c2 :: Idle => (->), Paint(1) ->) -> post :: Idle;",
    );
    let mut cs = conns(&c);
    cs.sort();
    assert_eq!(
        cs,
        vec![
            "Paint@12[0]->[0]post",
            "analyzer[0]->[0]x2",
            "analyzer[1]->[0]post",
            "c2[0]->[0]post",
            "c2[1]->[0]Paint@12",
            "c[0]->[1]analyzer",
            "c[1]->[0]c2",
            "x1[0]->[0]analyzer",
        ]
    );
    // A group's ports, and `input`/`output` inside it.
    let c = parse(
        "x :: Idle; y :: Discard;\n\
         x => ( [0] -> Null -> [0]y; [1] -> Discard; input[2] -> Counter -> output; ) -> Discard;",
    );
    let cs = conns(&c);
    for want in [
        "x[0]->[0]Null@",
        "x[1]->[0]Discard@",
        "x[2]->[0]Counter@",
        "Null@",
    ] {
        assert!(cs.iter().any(|s| s.starts_with(want)), "{want}: {cs:?}");
    }
    let e = errs("x :: Idle;\nx -> ( [1] -> Discard; );");
    assert_eq!(
        e,
        vec![
            "t.click:2: '<anonymous group>' input 0 missing",
            "t.click:2: '<anonymous group>' has no input 0",
        ]
    );
}

const EXAMPLES: &[&str] = &[
    "FromDump(f.pcap, STOP true) -> ToDump(out.pcap)",
    "src :: FromDevice(eth0); ctr :: Counter; sink :: Discard; src -> ctr; ctr -> sink;",
    // IP router fragment in the style of the Click paper (Figure 8), with compounds.
    r#"
    elementclass ErrorHandling { $ip |
        input -> ICMPError($ip, parameterproblem) -> output;
    }
    elementclass Output { $ip, $eth, $dev |
        input[0] -> DropBroadcasts
          -> cp :: CheckPaint(1)
          -> gio :: IPGWOptions($ip)
          -> FixIPSrc($ip)
          -> dt :: DecIPTTL
          -> fr :: IPFragmenter(1500)
          -> [0]arpq :: ARPQuerier($ip, $eth)
          -> Queue(200) -> ToDevice($dev);
        input[1] -> [1]arpq;
        cp[1] -> ICMPError($ip, redirect, host) -> output;
        gio[1] -> ErrorHandling($ip) -> output;
        dt[1] -> ICMPError($ip, timeexceeded) -> output;
        fr[1] -> ICMPError($ip, unreachable, needfrag) -> output;
    }
    require(package "sluice");
    define($IP0 18.26.4.24, $IP1 18.26.7.1);
    c0 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
    c1 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
    FromDevice(eth0) -> c0; FromDevice(eth1) -> c1;
    out0 :: Output($IP0, 00:00:c0:ae:67:ef, eth0);
    out1 :: Output($IP1, 00:00:c0:4f:71:ef, eth1);
    c0[0] -> ARPResponder($IP0 00:00:c0:ae:67:ef) -> Queue -> ToDevice(eth0);
    c1[0] -> ARPResponder($IP1 00:00:c0:4f:71:ef) -> Queue -> ToDevice(eth1);
    c0[1] -> [1]out0; c1[1] -> [1]out1;
    c0[3] -> Discard; c1[3] -> Discard;
    toh :: ToHost;
    rt :: StaticIPLookup(18.26.4.24/32 0, 18.26.7.1/32 0, 18.26.4.0/24 1, 18.26.7.0/24 2);
    ip :: Strip(14) -> CheckIPHeader -> GetIPAddress(16) -> rt;
    c0[2] -> Paint(1) -> ip; c1[2] -> Paint(2) -> ip;
    rt[0] -> toh; rt[1] -> out0; rt[2] -> out1;
    out0 -> rt; out1 -> rt;
    "#,
    "elementclass Foo { $a | input -> Queue($a) -> output || input -> output } Idle -> Foo(5) -> Foo -> Discard",
    "a :: InfiniteSource(DATA \"\\<00 11 22>\", LIMIT 10) -> t :: Tee(3); t[1] -> Discard; t[2] -> [0]Print(\"hi, there\", 40) -> Discard; t -> Discard",
    "x :: Script(wait 1s, write a.reset, \"// not a comment\")",
];

#[test]
fn unparse_round_trip() {
    for ex in EXAMPLES {
        let a = parse(ex);
        let text = unparse(&a);
        let b = match parse_config(&text, "u", &[]) {
            Ok(b) => b,
            Err(d) => panic!("reparse of {text}\nfailed: {d:?}"),
        };
        assert!(same(&a, &b), "round trip differs:\n{text}\n{a:?}\n{b:?}");
        assert_eq!(unparse(&b), text);
    }
}

#[test]
fn ip_router_example_structure() {
    let c = parse(EXAMPLES[2]);
    assert_eq!(c.requirements, vec!["package \"sluice\""]);
    assert_eq!(elem(&c, "out0/gio").config, "18.26.4.24");
    assert_eq!(elem(&c, "out1/arpq").config, "18.26.7.1, 00:00:c0:4f:71:ef");
    let cs = conns(&c);
    assert!(
        cs.contains(&"rt[1]->[0]out0/DropBroadcasts@1".to_string()),
        "{cs:?}"
    );
    assert!(
        cs.iter()
            .any(|s| s.starts_with("out0/ErrorHandling@") && s.ends_with("->[0]rt")),
        "{cs:?}"
    );
}

#[test]
fn dot_output() {
    let c = parse("a :: Idle; a [1] -> Discard");
    let d = to_dot(&c);
    assert!(d.starts_with("digraph"));
    assert!(d.contains("label=\"a :: Idle\""));
    assert!(d.contains("n0 -> n1 [label=\"[1] -> [0]\"]"));
}

struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn malformed_inputs_never_panic() {
    let pieces = [
        "a",
        "::",
        "->",
        "=>",
        "[",
        "]",
        "0",
        "1",
        "(",
        ")",
        "{",
        "}",
        ";",
        ",",
        "|",
        "||",
        "...",
        "$x",
        "elementclass",
        "input",
        "output",
        "Foo",
        "Counter",
        "define(",
        "require(",
        "\"",
        "'",
        "//",
        "/*",
        "*/",
        "\n",
        " ",
        "# 3 \"f\"\n",
        "@",
        "/",
        "\\",
        "${x}",
        "é",
    ];
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    for _ in 0..3000 {
        let n = rng.below(30);
        let mut s = String::new();
        for _ in 0..n {
            s.push_str(pieces[rng.below(pieces.len())]);
            if rng.below(3) == 0 {
                s.push(' ');
            }
        }
        if let Ok(c) = parse_config(&s, "f", &[]) {
            let _ = unparse(&c);
            let _ = to_dot(&c);
        }
    }
    // Mutations of valid examples.
    for _ in 0..2000 {
        let ex: Vec<char> = EXAMPLES[rng.below(EXAMPLES.len())].chars().collect();
        let mut v = ex.clone();
        for _ in 0..1 + rng.below(4) {
            if v.is_empty() {
                break;
            }
            let i = rng.below(v.len());
            match rng.below(3) {
                0 => {
                    v.remove(i);
                }
                1 => v.insert(
                    i,
                    pieces[rng.below(pieces.len())]
                        .chars()
                        .next()
                        .unwrap_or(' '),
                ),
                _ => v.truncate(i),
            }
        }
        let s: String = v.into_iter().collect();
        if let Ok(c) = parse_config(&s, "f", &[]) {
            let t = unparse(&c);
            let c2 = parse_config(&t, "g", &[]).expect("unparse output reparses");
            assert!(same(&c, &c2), "{s}\n{t}");
        }
    }
}

#[test]
fn exponential_compounds_are_bounded() {
    let mut s = String::from("elementclass C0 { input -> Counter -> output }\n");
    for i in 1..30 {
        s.push_str(&format!(
            "elementclass C{i} {{ input -> C{p} -> C{p} -> C{p} -> output }}\n",
            p = i - 1
        ));
    }
    s.push_str("Idle -> C29 -> Discard;");
    let e = errs(&s);
    assert!(e.iter().any(|m| m.contains("too large")), "{e:?}");
}

#[test]
fn deep_nesting_is_rejected_not_overflowing() {
    for open in [
        "(",
        "{",
        "Idle -> (",
        "Idle -> {",
        "elementclass A { elementclass B {",
    ] {
        let s = open.repeat(5000);
        assert!(parse_config(&s, "f", &[]).is_err());
    }
    let mut s = String::new();
    for _ in 0..150 {
        s.push_str("Idle -> { input -> ");
    }
    s.push_str("Counter");
    for _ in 0..150 {
        s.push_str(" -> output } -> Discard");
    }
    let _ = parse_config(&s, "f", &[]);
}

#[test]
fn many_to_one_and_many_to_many_connections() {
    let c = parse("a, b :: Idle -> d :: Discard;");
    assert_eq!(conns(&c), vec!["a[0]->[0]d", "b[0]->[0]d"]);
    let c = parse(
        "c :: Classifier(a, b); Idle -> c; c[0], c[1] => x :: Null, y :: Null -> d :: Discard;",
    );
    let cs = conns(&c);
    assert!(
        cs.contains(&"c[0]->[0]x".to_string()) && cs.contains(&"c[1]->[0]y".to_string()),
        "{:?}",
        cs
    );
    assert!(
        cs.contains(&"x[0]->[0]d".to_string()) && cs.contains(&"y[0]->[0]d".to_string()),
        "{:?}",
        cs
    );
    let c = parse("c :: Classifier(a, b); Idle -> c; c => x :: Null, y :: Null; x, y => m :: Mix;");
    let cs = conns(&c);
    assert!(
        cs.contains(&"c[1]->[0]y".to_string()) && cs.contains(&"y[0]->[1]m".to_string()),
        "{:?}",
        cs
    );
    assert!(!errs("a :: A; b :: B; c :: C; d :: D; a, b -> c, d;").is_empty());
    assert!(!errs("a :: A; b :: B; c :: C; d :: D; e :: E; a, b => c, d, e;").is_empty());
    let c = parse("a :: Idle; a -> x :: Null, y :: Null;");
    assert_eq!(conns(&c), vec!["a[0]->[0]x", "a[0]->[0]y"]);
}

#[test]
fn unparse_writes_clicks_flat_format() {
    let c = parse(
        "require(compact_config, foo, package \"a b\")\n\
         a, b, c, d :: Idle; a -> b -> c; a[1] -> d; d -> [1]b;",
    );
    assert_eq!(
        unparse(&c),
        "require(compact_config, package \"foo\", package \"a b\");\n\n\
         a :: Idle;\nb :: Idle;\nc :: Idle;\nd :: Idle;\n\n\
         a -> b\n    -> c;\na [1] -> d\n    -> [1] b;\n"
    );
}

#[test]
fn unparse_breaks_cycles_into_chains() {
    let c = parse("a :: Null; b :: Null; a -> b -> a;");
    assert_eq!(unparse(&c), "a :: Null;\nb :: Null;\n\nb -> a\n    -> b;\n");
}

#[test]
fn configurations_are_bytes() {
    let bytes = b"// caf\xe9\nInfiniteSource(DATA \"a\xffb\") -> Discard; /* \x80 */\n";
    let text = crate::decode_config(bytes);
    assert_eq!(crate::encode_config(&text), bytes.to_vec());
    let c = parse(&text);
    let data = args::unquote_bytes(&elem(&c, "InfiniteSource@1").config["DATA ".len()..]);
    assert_eq!(data, b"a\xffb".to_vec());
    assert_eq!(
        crate::encode_config(&unparse(&c)),
        b"InfiniteSource@1 :: InfiniteSource(DATA \"a\xffb\");\nDiscard@2 :: Discard;\n\nInfiniteSource@1 -> Discard@2;\n".to_vec()
    );
    let e = errs(&crate::decode_config(b"Idle -> Discard;\n\xff\n"));
    assert_eq!(e, vec!["t.click:2: syntax error near '\\xFF'"]);
}

#[test]
fn require_library_reads_classes_once() {
    // Click's test/standard/library-01: libraries relative to the requiring file, nested,
    // required twice.
    let d = std::env::temp_dir().join(format!("sluice-lib-{}", std::process::id()));
    std::fs::create_dir_all(d.join("dir")).unwrap();
    std::fs::write(
        d.join("lib"),
        "require(library dir/lib2)\nelementclass A { b :: B; }",
    )
    .unwrap();
    std::fs::write(d.join("dir/lib2"), "elementclass B { i :: Idle; }").unwrap();
    std::fs::write(d.join("lib3"), "require(library lib)").unwrap();
    let main = d.join("main").to_string_lossy().into_owned();
    let c = parse_config("require(library lib, library lib3)\na :: A;", &main, &[]).unwrap();
    assert_eq!(elem(&c, "a/b/i").class, "Idle");
    let e = parse_config("require(library nothing)", &main, &[]).unwrap_err();
    assert!(e[0].to_string().contains("library 'nothing'"), "{}", e[0]);
    let _ = std::fs::remove_dir_all(&d);
}
