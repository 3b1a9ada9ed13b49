"""Hostile configurations for the Click language and the IPFilter/IPClassifier expression
parser: deep nesting, long chains, non-UTF-8 bytes, and Click's errors and messages. Each case
asserts the exact outcome: success, or exit status 1 with Click's message."""
import re


def check_ok(run, config, timeout=30):
    rc, _, err = run("check", "{conf}", config=config, timeout=timeout)
    assert rc == 0, err[:2000]


def errors(run, config):
    """Runs `sluice check` on `config`, expects failure, returns the stderr lines."""
    rc, _, err = run("check", "{conf}", config=config)
    assert rc == 1, f"exit {rc}: {err[:2000]}"
    return err.splitlines()


def flatten(run, config):
    rc, out, err = run("flatten", "{conf}", config=config)
    assert rc == 0, err[:2000]
    return out.decode().splitlines()


NODE = re.compile(r"^(?:\[(\d+)\]\s*)?(\S+?)(?:\s*\[(\d+)\])?$")


def connections(lines):
    """The connections of a flattened configuration, one `A [p] -> [q] B;` string each (ports
    0 left out), whatever chains the flat format groups them into."""
    text = " ".join(l.strip() for l in lines if "::" not in l and not l.startswith("require"))
    out = []
    for st in text.split(";"):
        nodes = [NODE.match(n.strip()).groups() for n in st.split("->")] if "->" in st else []
        for (_, a, op), (ip, b, _) in zip(nodes, nodes[1:]):
            left = f"{a} [{op}]" if op and op != "0" else a
            right = f"[{ip}] {b}" if ip and ip != "0" else b
            out.append(f"{left} -> {right};")
    return out


# 1. Depth: nothing overflows the stack.


def test_ipfilter_deeply_nested_parentheses(run_limited):
    for n in (20_000, 100_000):
        conf = "Idle -> IPFilter(allow " + "(" * n + "tcp" + ")" * n + ") -> Discard"
        check_ok(run_limited, conf)


def test_ipclassifier_deep_nots_and_long_chains(run_limited):
    n = 100_000
    check_ok(run_limited, "Idle -> IPClassifier(" + "not " * n + "tcp) -> Discard")
    chain = " or ".join(f"src port {i % 65536}" for i in range(n))
    check_ok(run_limited, f"Idle -> IPClassifier({chain}) -> Discard", timeout=60)
    nest = "tcp and (icmp or (" * 20_000 + "udp" + "))" * 20_000
    check_ok(run_limited, f"Idle -> IPFilter(allow {nest}) -> Discard")


def test_ipfilter_nested_conditions_stay_small(run_limited):
    cond = "tcp"
    for i in range(60):
        cond = f"({cond}) ? ip ttl {i} : ip ttl {i + 100}"
    check_ok(run_limited, f"Idle -> IPFilter(allow {cond}) -> Discard", timeout=20)


def test_ipfilter_unbalanced_parentheses(run_limited):
    lines = errors(run_limited, "Idle -> IPFilter(allow " + "(" * 50_000 + "tcp) -> Discard")
    assert lines == ["test.click:1: unterminated configuration string"]
    lines = errors(run_limited, "Idle -> IPFilter(allow tcp ? udp) -> Discard")
    assert lines[1:] == [
        "  pattern 'tcp ? udp': expected ':' in '?:' expression",
        "Router could not be initialized!",
    ], lines


def test_deep_compound_and_group_nesting_is_refused(run_limited):
    lines = errors(run_limited, "Idle -> " + "{ input -> " * 5000)
    assert lines[0] == "test.click:1: maximum compound element nesting depth exceeded"
    lines = errors(run_limited, "Idle -> " + "( " * 5000)
    assert lines[0] == "test.click:1: maximum element group nesting depth exceeded"


# 2. Compound class chains and Click's overloading.


def class_chain(n):
    s = "elementclass A0 { input -> c :: Counter -> output }\n"
    s += "".join(f"elementclass A{i} {{ input -> A{i - 1} -> output }}\n" for i in range(1, n))
    return s + f"Idle -> A{n - 1} -> Discard;\n"


def test_long_compound_class_chains(run_limited):
    for n in (10_000, 100_000):
        check_ok(run_limited, class_chain(n))


def test_class_overloading_uses_the_previous_definition(run_limited):
    out = flatten(
        run_limited,
        "elementclass A { input -> Paint(1) -> output }\n"
        "elementclass A { input -> A -> Paint(2) -> output }\n"
        "Idle -> A -> Discard;\n",
    )
    assert "A@2/A@1/Paint@1 :: Paint(1);" in out, out
    assert "A@2/A@1/Paint@1 -> A@2/Paint@2;" in connections(out), out
    out = flatten(
        run_limited, "elementclass Discard { input -> Counter -> Discard }\nIdle -> Discard;\n"
    )
    assert "Discard@2/Discard@2 :: Discard;" in out, out
    assert "Discard@2/Counter@1 -> Discard@2/Discard@2;" in connections(out), out


# 3. Bytes that are not UTF-8.


def test_non_utf8_comment_is_accepted(run_limited):
    check_ok(run_limited, b"// caf\xe9 \xff\xfe\nIdle -> Discard; /* \x80\x81 */\n")


def test_non_utf8_bytes_in_strings_pass_through(run_limited):
    conf = b'InfiniteSource(DATA "a\xffb", LIMIT 1, STOP true) -> Discard;\n'
    rc, out, err = run_limited("flatten", "{conf}", config=conf)
    assert rc == 0, err
    assert b'DATA "a\xffb"' in out, out
    rc, out, err = run_limited("-q", "-e", conf.decode("utf-8", "surrogateescape"))
    assert rc == 0, err


def test_non_utf8_outside_strings_is_a_syntax_error_with_a_line(run_limited):
    lines = errors(run_limited, b"Idle -> Discard;\n\xff\n")
    assert lines == ["test.click:2: syntax error near '\\xFF'"], lines


# 4. Rejected as Click rejects them.


def test_class_name_as_element_name(run_limited):
    assert errors(run_limited, "Idle :: Idle;") == [
        "test.click:1: class 'Idle' used as element name"
    ]


def test_parameter_defined_twice(run_limited):
    assert errors(run_limited, "define($a 1);\ndefine($a 2);\nIdle -> Discard;") == [
        "test.click:2: parameter '$a' multiply defined"
    ]


def test_redeclaration_names_both_places(run_limited):
    assert errors(run_limited, "c :: Idle;\nc :: Discard;") == [
        "test.click:2: redeclaration of element 'c'",
        "test.click:1: element 'c' previously declared here",
    ]


def test_compound_with_unconnected_input(run_limited):
    assert errors(
        run_limited, "elementclass C { input -> Discard }\nc :: C;\nIdle -> Discard;"
    ) == ["test.click:2: 'c' input 0 unused"]


# 5. Messages.


def test_no_false_second_error(run_limited):
    assert errors(run_limited, "Idle -> IPReassembler(HIMEM 0, TIMEOUT 0) -> Discard;") == [
        "test.click:1: While configuring 'IPReassembler@2 :: IPReassembler':",
        "  TIMEOUT: must be positive",
        "Router could not be initialized!",
    ]


def test_compound_port_errors_name_the_compound(run_limited):
    conf = "elementclass C { input -> Discard }\nc :: C;\nIdle -> c;\nIdle -> [1] c;\n"
    assert errors(run_limited, conf) == ["test.click:2: 'c' has no input 1"]
    conf = "elementclass C { input -> Discard }\nIdle -> c :: C -> Discard;\n"
    assert errors(run_limited, conf) == ["test.click:2: 'c' has no output 0"]


def test_port_number_out_of_range(run_limited):
    assert errors(run_limited, "Idle -> [99999999999] Discard;") == [
        "test.click:1: port number 99999999999 out of range"
    ]


# 6. Click 2.x connection groups.


def test_connection_group_with_ports(run_limited):
    out = flatten(
        run_limited,
        "x :: Tee(2); y :: Discard;\nIdle -> x;\n"
        "x => ( [0] -> Null -> [0]y; [1] -> Discard; )\n",
    )
    assert "x -> Null@7;" in connections(out), out
    assert "x [1] -> Discard@8;" in connections(out), out
    assert "Null@7 -> y;" in connections(out), out
    check_ok(
        run_limited,
        "x :: Tee(2); y :: Discard;\nIdle -> x;\n"
        "x => ( [0] -> Null -> [0]y; [1] -> Discard; )\n",
    )


def test_port_lists_and_group_pseudoports(run_limited):
    out = flatten(run_limited, "a, b, c :: Idle;\na => b, c, [0,1] a;\n")
    assert sorted(connections(out)) == [
        "a -> b;",
        "a [1] -> c;",
        "a [2] -> a;",
        "a [3] -> [1] a;",
    ]
    out = flatten(
        run_limited,
        "t :: Tee(3);\nIdle -> t;\n"
        "t [0-2] => (input -> c :: Counter -> output), (-> Null ->), Discard -> Discard;\n",
    )
    conns = connections(out)
    assert "t -> c;" in conns and "t [1] -> Null@10;" in conns and "t [2] -> Discard@11;" in conns, conns
    lines = errors(run_limited, "a, b :: Idle;\na [0,1] => [0,1,2] b;\n")
    assert lines == ["test.click:2: connection mismatch: 2 outputs connected to 3 inputs"]
    lines = errors(run_limited, "a, b :: Idle;\na [0,1] -> [0,1] b;\n")
    assert lines == ["test.click:2: syntax error: many-to-many connections require '=>'"]


def test_many_parameters(run_limited):
    n = 100_000
    defs = ", ".join(f"$a{i} {i}" for i in range(n))
    check_ok(run_limited, f"define({defs});\nIdle -> Print($a{n - 1}) -> Discard;", timeout=20)
    formals = ", ".join(f"$a{i}" for i in range(n))
    actuals = ", ".join(str(i) for i in range(n))
    conf = f"elementclass C {{ {formals} | input -> Print($a{n - 1}) -> output }}\n"
    out = flatten(run_limited, conf + f"Idle -> C({actuals}) -> Discard;")
    assert f"C@2/Print@1 :: Print({n - 1});" in out, out[:5]


def test_long_declaration_lists_and_chains(run_limited):
    n = 100_000
    names = ", ".join(f"a{i}" for i in range(n))
    check_ok(run_limited, f"{names} :: Idle;", timeout=20)
    check_ok(run_limited, "Idle -> " + "Null -> " * n + "Discard;", timeout=20)


def test_too_many_elements(run_limited):
    lines = errors(run_limited, "Idle -> Discard;\n" * 150_000)
    assert lines == ["test.click:100001: configuration too large"]
