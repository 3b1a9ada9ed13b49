//! `sluice cluster build`: one Click configuration per node of a cluster description.
//!
//! Node k's configuration is a Figure-8 IP router whose route table covers the whole
//! cluster: every external port of every node is an egress of it. Packets are routed once,
//! at their input node; each egress path (TTL, options, fragmentation) ends in a
//! ClusterEncap that writes the output node, its port and the next hop into an Ethernet
//! header, and DirectVLB moves the frame over the internal links (RouteBricks §6.1). At the
//! output node ClusterDecap hands the packet to the port's ARPQuerier.

use std::fmt::Write;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use crate::desc::{self, format_bps, tag, Cluster, Egress};

/// Usage of `sluice cluster build`.
pub const USAGE: &str = "\
Usage: sluice cluster build DESC [--out DIR] [--node NAME]

Writes the Click configuration of every node of the cluster described in DESC (a TOML
file; conf/cluster/rb4.toml documents the format) to DIR/NODE.click; DIR defaults to
./NAME, the cluster's name. With --node, prints that node's configuration instead.
Each configuration runs with plain `sluice` as root (`sluice cluster up` runs them all
in network namespaces).

Options:
  --out DIR      directory to write NODE.click files into (created if needed)
  --node NAME    print node NAME's configuration on standard output
";

/// Runs `sluice cluster build ARGS`.
pub fn main(args: &[String]) -> Result<(), String> {
    let mut desc_path = None;
    let mut out = None;
    let mut node = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("cluster build: {name} needs a value\n{USAGE}"))
        };
        match a.as_str() {
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(());
            }
            "--out" | "-o" => out = Some(value("--out")?),
            "--node" => node = Some(value("--node")?),
            s if s.starts_with("--out=") => out = Some(s["--out=".len()..].to_string()),
            s if s.starts_with("--node=") => node = Some(s["--node=".len()..].to_string()),
            s if s.starts_with('-') && s.len() > 1 => {
                return Err(format!("cluster build: unknown option '{s}'\n{USAGE}"))
            }
            s if desc_path.is_none() => desc_path = Some(s.to_string()),
            s => return Err(format!("cluster build: unexpected argument '{s}'\n{USAGE}")),
        }
    }
    let desc_path = desc_path.ok_or_else(|| format!("cluster build: no description\n{USAGE}"))?;
    let cluster = desc::load(&desc_path)?;
    let source = source_name(&desc_path);
    if let Some(name) = node {
        if out.is_some() {
            return Err("cluster build: --node prints one configuration; drop --out".into());
        }
        let k = cluster.node_index(&name).ok_or_else(|| {
            let names: Vec<&str> = cluster.nodes.iter().map(|n| n.name.as_str()).collect();
            format!(
                "cluster build: no node '{name}' (nodes: {})",
                names.join(", ")
            )
        })?;
        print!("{}", node_config(&cluster, k, &source));
        return Ok(());
    }
    let dir = PathBuf::from(out.unwrap_or_else(|| cluster.name.clone()));
    for path in write_configs(&cluster, &source, &dir)? {
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// How configurations name their description: the file name without its directory.
pub fn source_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map_or_else(|| path.to_string(), |f| f.to_string_lossy().into_owned())
}

/// Writes every node's configuration to `dir/NODE.click` (creating `dir`); returns the
/// paths written, in node order.
pub fn write_configs(c: &Cluster, source: &str, dir: &Path) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut paths = Vec::new();
    for (k, n) in c.nodes.iter().enumerate() {
        let path = dir.join(format!("{}.click", n.name));
        std::fs::write(&path, node_config(c, k, source))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        paths.push(path);
    }
    Ok(paths)
}

/// The element-name suffix of an egress: `NODE_DEVICE` (`n2_ext0`).
pub fn egress_tag(c: &Cluster, e: Egress) -> String {
    format!("{}_{}", tag(&c.nodes[e.node].name), tag(&c.port(e).device))
}

/// Node `k`'s Click configuration; `source` names the description in its header.
pub fn node_config(c: &Cluster, k: usize, source: &str) -> String {
    let node = &c.nodes[k];
    let n = c.nodes.len();
    let egresses = c.egresses();
    let mut s = String::new();
    let w = &mut s;

    // Header.
    let _ = writeln!(
        w,
        "// Cluster router \"{}\": node {} (index {k} of {n} nodes).",
        c.name, node.name
    );
    let _ = writeln!(
        w,
        "// Generated by `sluice cluster build` from {source}: edit the description, not this file."
    );
    let _ = writeln!(
        w,
        "// Runs with plain `sluice` as root; `sluice cluster up` runs every node in a namespace."
    );
    let _ = writeln!(w, "//\n// Devices of this node:");
    for (p, port) in node.ports.iter().enumerate() {
        let _ = writeln!(
            w,
            "//   {:<15} external port {p}: {}, ether {}, mtu {}",
            port.device, port.address, port.ether, port.mtu
        );
    }
    for (i, dev) in node.links.iter().enumerate() {
        if i != k {
            let _ = writeln!(
                w,
                "//   {dev:<15} internal link to {} (node {i})",
                c.nodes[i].name
            );
        }
    }
    let _ = writeln!(
        w,
        "// External ports must receive frames for their ether (`cluster up` sets the address);\n\
         // internal links are read in promiscuous mode."
    );
    let _ = writeln!(
        w,
        "//\n// Direct VLB: {} per external port ({} for this node), internal links {},\n\
         // flowlets {}, hellos every {}, a link is down after {} of silence.",
        format_bps(c.rate_bps),
        format_bps(c.node_rate_bps(k)),
        format_bps(c.link_rate_bps),
        c.flowlet.as_deref().unwrap_or("off"),
        c.hello,
        c.dead
    );
    let _ = writeln!(
        w,
        "//\n// Egresses of the cluster (route table output: output node, port):"
    );
    for (e, &eg) in egresses.iter().enumerate() {
        let port = c.port(eg);
        let _ = writeln!(
            w,
            "//   {:>3}  {} port {} ({}), {}",
            e + 1,
            c.nodes[eg.node].name,
            eg.port,
            port.device,
            port.address
        );
    }

    // Route table.
    let mut routes: Vec<String> = Vec::new();
    let all_ports: Vec<_> = egresses.iter().map(|&e| c.port(e)).collect();
    for port in &all_ports {
        routes.push(format!("{}/32 0", port.address.addr));
    }
    for port in &all_ports {
        for a in port.address.special_addrs() {
            routes.push(format!("{a}/32 0"));
        }
    }
    routes.push("255.255.255.255/32 0".into());
    routes.push("0.0.0.0/32 0".into());
    for (e, port) in all_ports.iter().enumerate() {
        routes.push(format!("{} {}", port.address.net(), e + 1));
        for r in &port.routes {
            match r.gateway {
                Some(g) => routes.push(format!("{} {g} {}", r.prefix, e + 1)),
                None => routes.push(format!("{} {}", r.prefix, e + 1)),
            }
        }
    }
    let _ = writeln!(
        w,
        "\n// The route table of the whole cluster, the same on every node (the cluster is one\n\
         // router). Output 0: the router's own addresses and broadcasts; output e: egress e."
    );
    let _ = writeln!(w, "rt :: RadixIPLookup(\n\t{});", routes.join(",\n\t"));

    // IP input.
    let interfaces: Vec<String> = all_ports.iter().map(|p| p.address.to_string()).collect();
    let _ = writeln!(
        w,
        "\n// IP packets from every external port: strip Ethernet, check the header, look up the route.\n\
         ip :: Strip(14)\n\
         \t-> chk :: CheckIPHeader(INTERFACES {})\n\
         \t-> GetIPAddress(16)\n\
         \t-> rt;",
        interfaces.join(" ")
    );
    let _ = writeln!(
        w,
        "\n// Packets for the router itself: pings are answered, the rest is discarded.\n\
         rt[0] -> host :: IPClassifier(icmp type echo, -);\n\
         host[0] -> ping :: ICMPPingResponder -> rt;\n\
         host[1] -> host_drop :: Discard;"
    );

    // DirectVLB.
    let mut vlb = format!(
        "vlb :: DirectVLB({k}, {n}, {}, LINK_RATE {}",
        format_bps(c.node_rate_bps(k)),
        format_bps(c.link_rate_bps)
    );
    if let Some(b) = c.burst {
        let _ = write!(vlb, ", BURST {b}");
    }
    let _ = write!(
        vlb,
        ", FLOWLET {}, HELLO {}, DEAD {});",
        c.flowlet.as_deref().unwrap_or("0"),
        c.hello,
        c.dead
    );
    let _ = writeln!(
        w,
        "\n// Direct VLB over the internal links. Input 0: packets that entered the cluster here\n\
         // (from ClusterEncap); input 1: frames from the internal links. Output i: the link to\n\
         // node i; output {k} (this node): this node's egresses (ClusterDecap).\n{vlb}"
    );

    // External ports.
    for (p, port) in node.ports.iter().enumerate() {
        let t = tag(&port.device);
        let (a, m, d) = (port.address.addr, port.ether, &port.device);
        let _ = writeln!(
            w,
            "\n// ---- external port {p}, {d}: {}, ether {m}, mtu {}\n\
             in_{t} :: FromDevice({d})\n\
             \t-> hf_{t} :: HostEtherFilter({m})\n\
             \t-> c_{t} :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);\n\
             out_{t} :: Queue(1000) -> to_{t} :: ToDevice({d});\n\
             c_{t}[0] -> arpr_{t} :: ARPResponder({a} {m}) -> out_{t};\n\
             arpq_{t} :: ARPQuerier({}, {m}) -> out_{t};\n\
             c_{t}[1] -> [1]arpq_{t};\n\
             c_{t}[2] -> ip;\n\
             c_{t}[3] -> other_{t} :: Discard;",
            port.address, port.mtu, port.address
        );
    }

    // Egresses.
    let badaddrs: Vec<String> = all_ports
        .iter()
        .flat_map(|p| {
            let mut v = p.address.special_addrs();
            v.reverse(); // broadcast first, as make-ip-conf.py writes them
            v
        })
        .map(|a: Ipv4Addr| a.to_string())
        .collect();
    let bad = if badaddrs.is_empty() {
        String::new()
    } else {
        ", BADADDRS $BADADDRS".to_string()
    };
    let _ = writeln!(
        w,
        "\n// Egress paths, one per external port of the cluster: the input node does all the IP\n\
         // work, then ClusterEncap(FROM, TO, PORT) addresses the packet to output node TO, port\n\
         // PORT (with the next hop), and DirectVLB carries it there. ICMP errors go back to rt."
    );
    if !badaddrs.is_empty() {
        let _ = writeln!(
            w,
            "// No ICMP error goes to a subnet broadcast or network address of the cluster:\n\
             define($BADADDRS {});",
            badaddrs.join(" ")
        );
    }
    for (e, &eg) in egresses.iter().enumerate() {
        let port = c.port(eg);
        let t = egress_tag(c, eg);
        let a = port.address.addr;
        let mtu = port.mtu;
        let _ = writeln!(
            w,
            "\n// egress {}: node {} port {} ({}), {}\n\
             rt[{}] -> bc_{t} :: DropBroadcasts\n\
             \t-> gio_{t} :: IPGWOptions({a})\n\
             \t-> fix_{t} :: FixIPSrc({a})\n\
             \t-> dt_{t} :: DecIPTTL\n\
             \t-> fr_{t} :: IPFragmenter({mtu})\n\
             \t-> enc_{t} :: ClusterEncap({k}, {}, {})\n\
             \t-> [0]vlb;\n\
             dt_{t}[1] -> ttl_err_{t} :: ICMPError({a}, timeexceeded{bad}) -> rt;\n\
             gio_{t}[1] -> opt_err_{t} :: ICMPError({a}, parameterproblem{bad}) -> rt;\n\
             fr_{t}[1] -> frag_err_{t} :: ICMPError({a}, unreachable, needfrag{bad}, PMTU {mtu}) -> rt;",
            e + 1,
            c.nodes[eg.node].name,
            eg.port,
            port.device,
            port.address,
            e + 1,
            eg.node,
            eg.port
        );
    }

    // Internal links.
    for (i, dev) in node.links.iter().enumerate() {
        if i == k {
            continue;
        }
        let t = tag(&c.nodes[i].name);
        let _ = writeln!(
            w,
            "\n// ---- internal link to {} (node {i}): {dev}\n\
             link_{t} :: FromDevice({dev}, PROMISC true) -> [1]vlb;\n\
             vlb[{i}] -> linkq_{t} :: Queue(1000) -> linkout_{t} :: ToDevice({dev});",
            c.nodes[i].name
        );
    }

    if c.nodes.len() == 1 {
        let _ = writeln!(
            w,
            "\n// A single node has no internal links.\nIdle -> [1]vlb;"
        );
    }

    // Output node.
    let _ = writeln!(
        w,
        "\n// Output node: frames for this node's ports get their next hop back and go to ARP.\n\
         vlb[{k}] -> dec :: ClusterDecap;"
    );
    for (p, port) in node.ports.iter().enumerate() {
        let _ = writeln!(w, "dec[{p}] -> [0]arpq_{};", tag(&port.device));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_lang::FlatConfig;

    const RB4: &str = include_str!("../../../conf/cluster/rb4.toml");
    const RB4_CONFS: [&str; 4] = [
        include_str!("../../../conf/cluster/rb4/n1.click"),
        include_str!("../../../conf/cluster/rb4/n2.click"),
        include_str!("../../../conf/cluster/rb4/n3.click"),
        include_str!("../../../conf/cluster/rb4/n4.click"),
    ];

    fn flat(text: &str) -> FlatConfig {
        sluice_lang::parse_config(text, "node.click", &[]).unwrap_or_else(|d| {
            panic!(
                "{}\n{text}",
                d.iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join("\n")
            )
        })
    }

    /// The targets of output `port` of element `name`.
    fn outs(f: &FlatConfig, name: &str, port: usize) -> Vec<(String, usize)> {
        let i = f.find(name).unwrap_or_else(|| panic!("no element {name}"));
        f.connections
            .iter()
            .filter(|c| c.from == i && c.from_port == port)
            .map(|c| (f.elements[c.to].name.clone(), c.to_port))
            .collect()
    }

    fn class_of<'a>(f: &'a FlatConfig, name: &str) -> (&'a str, &'a str) {
        let e = &f.elements[f.find(name).unwrap_or_else(|| panic!("no element {name}"))];
        (&e.class, &e.config)
    }

    #[test]
    fn rb4_nodes_parse_and_are_wired() {
        let c = desc::parse(RB4, "rb4.toml").unwrap();
        for k in 0..4 {
            let f = flat(&node_config(&c, k, "rb4.toml"));
            let me = &c.nodes[k].name;
            // The whole cluster's route table.
            let (class, config) = class_of(&f, "rt");
            assert_eq!(class, "RadixIPLookup");
            for e in 1..=4 {
                assert!(config.contains(&format!("198.18.{e}.0/24 {e}")), "{config}");
                assert!(config.contains(&format!("198.18.{e}.1/32 0")));
                assert_eq!(outs(&f, "rt", e).len(), 1);
                let enc = format!("enc_n{e}_ext0");
                assert_eq!(
                    class_of(&f, &enc),
                    ("ClusterEncap", &*format!("{k}, {}, 0", e - 1))
                );
                assert_eq!(outs(&f, &enc, 0), [("vlb".to_string(), 0)]);
            }
            assert_eq!(outs(&f, "rt", 5), []);
            let (class, config) = class_of(&f, "vlb");
            assert_eq!(class, "DirectVLB");
            assert_eq!(
                config,
                format!("{k}, 4, 100Mbps, LINK_RATE 50Mbps, FLOWLET 100ms, HELLO 10ms, DEAD 50ms")
            );
            // Every VLB output: a link, or ClusterDecap for this node.
            for i in 0..4 {
                let o = outs(&f, "vlb", i);
                if i == k {
                    assert_eq!(o, [("dec".to_string(), 0)]);
                } else {
                    let peer = &c.nodes[i].name;
                    assert_eq!(o, [(format!("linkq_{peer}"), 0)]);
                    assert_eq!(
                        class_of(&f, &format!("link_{peer}")),
                        ("FromDevice", &*format!("to-{peer}, PROMISC true"))
                    );
                    assert_eq!(
                        outs(&f, &format!("link_{peer}"), 0),
                        [("vlb".to_string(), 1)]
                    );
                    assert_eq!(
                        class_of(&f, &format!("linkout_{peer}")),
                        ("ToDevice", &*format!("to-{peer}"))
                    );
                }
            }
            assert!(f.find(&format!("link_{me}")).is_none());
            assert_eq!(outs(&f, "dec", 0), [("arpq_ext0".to_string(), 0)]);
            assert_eq!(class_of(&f, "in_ext0"), ("FromDevice", "ext0"));
            let mac = format!("02:53:4c:00:0{k}:00");
            assert_eq!(class_of(&f, "hf_ext0").1, mac);
            assert_eq!(
                class_of(&f, "arpq_ext0").1,
                format!("198.18.{}.1/24, {mac}", k + 1)
            );
            assert_eq!(outs(&f, "c_ext0", 2), [("ip".to_string(), 0)]);
            assert_eq!(outs(&f, "host", 0), [("ping".to_string(), 0)]);
        }
    }

    #[test]
    fn committed_rb4_examples_are_current() {
        let c = desc::parse(RB4, "rb4.toml").unwrap();
        for (k, committed) in RB4_CONFS.iter().enumerate() {
            assert_eq!(
                node_config(&c, k, "rb4.toml"),
                *committed,
                "conf/cluster/rb4/{}.click is stale: run `sluice cluster build \
                 conf/cluster/rb4.toml --out conf/cluster/rb4`",
                c.nodes[k].name
            );
        }
    }

    #[test]
    fn several_ports_routes_and_renamed_links() {
        let text = r#"
            name = "t"
            rate = "10Gbps"
            flowlet = "off"
            burst = 32768
            [[node]]
            name = "a"
            [[node.port]]
            address = "198.18.1.1/24"
            routes = ["0.0.0.0/0 198.18.1.254"]
            [[node.port]]
            device = "eth.7"
            address = "198.18.5.1/30"
            mtu = 9000
            [[node]]
            name = "b-2"
            [[node.port]]
            address = "198.18.2.1/24"
            routes = ["198.19.0.0/16"]
            [[node]]
            name = "c"
            [[node.port]]
            address = "198.18.3.1/24"
            [[link]]
            a = "a"
            b = "b-2"
            a_device = "ab"
        "#;
        let c = desc::parse(text, "t.toml").unwrap();
        assert_eq!(c.link_rate_bps, 13_333_333_334);
        let f = flat(&node_config(&c, 1, "t.toml"));
        let (_, rt) = class_of(&f, "rt");
        assert!(rt.contains("0.0.0.0/0 198.18.1.254 1,"), "{rt}");
        assert!(rt.contains("198.18.5.0/30 2,"));
        assert!(rt.contains("198.18.5.0/32 0,") && rt.contains("198.18.5.3/32 0,"));
        assert!(rt.contains("198.19.0.0/16 3,"));
        assert!(rt.ends_with("198.18.3.0/24 4"));
        assert_eq!(
            class_of(&f, "vlb").1,
            "1, 3, 10Gbps, LINK_RATE 13333333334bps, BURST 32768, FLOWLET 0, HELLO 10ms, DEAD 50ms"
        );
        assert_eq!(class_of(&f, "enc_a_eth_7"), ("ClusterEncap", "1, 0, 1"));
        assert_eq!(class_of(&f, "fr_a_eth_7").1, "9000");
        assert!(class_of(&f, "frag_err_a_eth_7").1.ends_with("PMTU 9000"));
        assert_eq!(class_of(&f, "enc_b_2_ext0"), ("ClusterEncap", "1, 1, 0"));
        assert_eq!(class_of(&f, "link_a").1, "to-a, PROMISC true");
        assert_eq!(class_of(&f, "link_c").1, "to-c, PROMISC true");
        // Node a names its link to b-2 "ab".
        let fa = flat(&node_config(&c, 0, "t.toml"));
        assert_eq!(class_of(&fa, "link_b_2").1, "ab, PROMISC true");
        assert_eq!(outs(&fa, "dec", 1), [("arpq_eth_7".to_string(), 0)]);
        assert_eq!(class_of(&fa, "vlb").1.split(", ").nth(2), Some("20Gbps"));
    }

    #[test]
    fn command_line() {
        let dir = std::env::temp_dir().join(format!("sluice-cluster-build-{}", std::process::id()));
        let desc_path = dir.join("rb4.toml");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&desc_path, RB4).unwrap();
        let out = dir.join("out");
        let args = [
            desc_path.to_string_lossy().into_owned(),
            "--out".into(),
            out.to_string_lossy().into_owned(),
        ];
        main(&args).unwrap();
        for (k, name) in ["n1", "n2", "n3", "n4"].iter().enumerate() {
            let text = std::fs::read_to_string(out.join(format!("{name}.click"))).unwrap();
            assert_eq!(text, RB4_CONFS[k]);
        }
        let err = main(&[
            desc_path.to_string_lossy().into_owned(),
            "--node".into(),
            "n9".into(),
        ])
        .unwrap_err();
        assert!(err.contains("no node 'n9'"), "{err}");
        assert!(main(&["--bogus".into()])
            .unwrap_err()
            .contains("unknown option"));
        assert!(main(&[]).unwrap_err().contains("no description"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
