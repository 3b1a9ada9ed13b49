//! Command-line parsing: Click's options plus Sluice's subcommands.

use sluice_core::threads::MAX_THREADS;
use sluice_elements::script::control_socket::TcpPort;
use sluice_elements::script::functions::quote;
use sluice_lang::args::FromArg;
use tracing_subscriber::filter::LevelFilter;

use crate::logging::{parse_level, LogFormat};

/// What to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Run the router (default).
    Run,
    /// Parse and configure only.
    Check,
    /// Print the flat configuration.
    Flatten,
    /// Print a Graphviz graph.
    Dot,
    /// Print an element class's documentation.
    Doc(String),
    /// List element classes.
    Classes,
    /// Run the benchmark workloads with these arguments.
    Bench(Vec<String>),
    /// Build, run, plan or simulate a cluster router with these arguments.
    Cluster(Vec<String>),
    /// Plan the placement of a configuration on threads, with these arguments.
    Plan(Vec<String>),
    /// Print usage.
    Help,
    /// Print the version.
    Version,
}

/// Parsed command line.
#[derive(Debug, Clone)]
pub struct Options {
    pub command: Command,
    pub file: Option<String>,
    pub expr: Option<String>,
    pub handlers: Vec<String>,
    pub exit_handler: Option<String>,
    pub quit: bool,
    pub output: Option<String>,
    /// ControlSockets from `-p`/`-u`: configuration and the option's argument position.
    pub control_sockets: Vec<(String, u32)>,
    pub threads: usize,
    pub simtime: bool,
    /// `-R`: provide the `hotconfig` write handler.
    pub reconfigure: bool,
    /// The HTTPServer of `--http`, `--http-token-file` and `--http-read-only`: its
    /// configuration and the `--http` option's argument position.
    pub http: Option<(String, u32)>,
    /// `--log LEVEL` (or `$SLUICE_LOG`): the least severe log events written.
    pub log_level: LevelFilter,
    /// `--log-format text|json`.
    pub log_format: LogFormat,
    /// `--plan`: place a chain configuration by `sluice plan`'s choice.
    pub plan: Option<PlanMode>,
    pub defines: Vec<(String, String)>,
}

/// What `--plan` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanMode {
    /// Run the configuration as `sluice plan` places it on the `-j` threads.
    Auto,
    /// Print that configuration and exit.
    Show,
}

pub const USAGE: &str = "\
Usage: sluice [COMMAND] [OPTION]... [ROUTERFILE] [PARAM=VALUE]...

Commands:
  run                      Run the router (the default).
  check                    Parse and configure the router, report every error, exit.
  flatten                  Print the flattened configuration.
  dot                      Print the configuration graph in Graphviz dot format.
  doc CLASS                Print the documentation of element class CLASS.
  classes                  List the element classes.
  bench [WORKLOAD...]      Run the built-in benchmark workloads (see `sluice bench --help`).
  cluster COMMAND ...      Build, run, plan or simulate a cluster router (see `sluice cluster --help`).
  plan CONFIG -j N         Predict cloned, pipelined and mixed placements, choose one (see `sluice plan --help`).

Options (as in Click):
  -f, --file FILE          Read the router configuration from FILE ('-' for stdin).
  -e, --expression EXPR    Use EXPR as the router configuration.
  -h, --handler ELEM.H     Call read handler ELEM.H after running (globs allowed: '*.count');
                           repeatable.
  -x, --exit-handler ELEM.H
                           Use handler ELEM.H's value (integer or boolean) as the exit
                           status.
  -q, --quit               Initialize the router, print handlers, and quit without running.
  -o, --output FILE        Write the flattened configuration to FILE.
  -p, --port PORT          Listen for ControlSocket connections on TCP port PORT (every
                           address, as in Click; 'N+': N or a later free port).
  -u, --unix-socket PATH   Listen for ControlSocket connections on Unix socket PATH.
  -j, --threads N          Number of worker threads (1 to 256).
  -R, --allow-reconfigure  Provide a writable 'hotconfig' handler: writing a configuration
                           to it replaces the running one, keeping same-named elements' state.
      --simtime            Run on a simulated clock: jump to the next timer when idle.

HTTP control (Sluice's):
      --http [ADDR:]PORT   Serve the HTTP/JSON API, Prometheus metrics (/metrics) and the
                           web view on ADDR (default 127.0.0.1) port PORT, and count packets
                           per element (see `sluice doc HTTPServer`).
      --http-token-file FILE
                           Require 'Authorization: Bearer TOKEN', TOKEN read from FILE.
      --http-read-only     Refuse handler writes, hot swaps and route changes (403).

Placement (Sluice's): for a chain configuration (source -> elements -> sink).
      --plan auto          Run it cloned, pipelined or mixed over the -j threads, as
                           `sluice plan` chooses from its cost model (the choice on stderr).
      --plan show          Print that configuration and exit.

Logs (Sluice's): control events (hot swaps, placement moves, HTTP requests, routes).
      --log LEVEL          off, error, warn (the default, or $SLUICE_LOG), info, debug, trace.
      --log-format FORMAT  text (the default) or json: one JSON object per line.

      --help               Print this message.  --version  Print the version.
  PARAM=VALUE              Define configuration parameter $PARAM.
";

/// Click's options: long name, short letter, whether a value follows.
const OPTIONS: &[(&str, Option<char>, bool)] = &[
    ("file", Some('f'), true),
    ("expression", Some('e'), true),
    ("handler", Some('h'), true),
    ("exit-handler", Some('x'), true),
    ("quit", Some('q'), false),
    ("output", Some('o'), true),
    ("port", Some('p'), true),
    ("unix-socket", Some('u'), true),
    ("threads", Some('j'), true),
    ("allow-reconfigure", Some('R'), false),
    ("simtime", None, false),
    ("http", None, true),
    ("http-token-file", None, true),
    ("http-read-only", None, false),
    ("log", None, true),
    ("log-format", None, true),
    ("plan", None, true),
    ("help", None, false),
    ("version", Some('v'), false),
];

/// One command-line item: the option's long name (`None` for a plain argument), its value,
/// and its position on the command line (counting from 1).
type Token = (Option<&'static str>, String, u32);

/// Splits Click-style options into (long name, value, position) triples and plain arguments
/// (the position counts arguments from 1, starting at `first`), as Click's
/// option parser does: `--name VALUE`, `--name=VALUE`, unambiguous abbreviations of long
/// names (`--sim`), bundled short options (`-qh ELEM.H`), and values attached to a short
/// option (`-o-`, `-qo/dev/null`). `-` alone is a plain argument.
fn tokenize(args: &[String], first: usize) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    let value = |i: &mut usize, name: &str| -> Result<String, String> {
        *i += 1;
        args.get(*i)
            .cloned()
            .ok_or_else(|| format!("option '--{}' requires an argument", name))
    };
    while i < args.len() {
        let a = args[i].as_str();
        let at = (first + i + 1) as u32;
        if let Some(long) = a.strip_prefix("--").filter(|l| !l.is_empty()) {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let matches: Vec<_> = OPTIONS
                .iter()
                .filter(|o| o.0 == name || o.0.starts_with(name))
                .collect();
            let opt = match matches.iter().find(|o| o.0 == name) {
                Some(o) => *o,
                None if matches.len() == 1 => matches[0],
                None if matches.is_empty() => return Err(format!("unrecognized option '{}'", a)),
                None => return Err(format!("option '{}' is ambiguous", a)),
            };
            let v = match (opt.2, inline) {
                (true, Some(v)) => v,
                (true, None) => value(&mut i, opt.0)?,
                (false, Some(_)) => {
                    return Err(format!("option '--{}' doesn't allow an argument", opt.0))
                }
                (false, None) => String::new(),
            };
            out.push((Some(opt.0), v, at));
        } else if a.len() > 1 && a.starts_with('-') {
            for (k, c) in a.char_indices().skip(1) {
                let opt = OPTIONS
                    .iter()
                    .find(|o| o.1 == Some(c))
                    .ok_or_else(|| format!("unrecognized option '-{}'", c))?;
                if opt.2 {
                    let rest = &a[k + c.len_utf8()..];
                    let v = if rest.is_empty() {
                        value(&mut i, opt.0)?
                    } else {
                        rest.to_string()
                    };
                    out.push((Some(opt.0), v, at));
                    break;
                }
                out.push((Some(opt.0), String::new(), at));
            }
        } else {
            out.push((None, a.to_string(), at));
        }
        i += 1;
    }
    Ok(out)
}

impl Options {
    /// Parses the command line (without the program name).
    pub fn parse(args: &[String]) -> Result<Options, String> {
        let mut o = Options {
            command: Command::Run,
            file: None,
            expr: None,
            handlers: Vec::new(),
            exit_handler: None,
            quit: false,
            output: None,
            control_sockets: Vec::new(),
            threads: 1,
            simtime: false,
            reconfigure: false,
            http: None,
            log_level: match std::env::var("SLUICE_LOG") {
                Ok(v) => parse_level(&v).map_err(|e| format!("SLUICE_LOG: {e}"))?,
                Err(_) => LevelFilter::WARN,
            },
            log_format: LogFormat::Text,
            plan: None,
            defines: Vec::new(),
        };
        let mut http: Option<(HttpListen, u32)> = None;
        let (mut token_file, mut http_read_only) = (None, false);
        let mut i = 0;
        if let Some(first) = args.first() {
            let cmd = match first.as_str() {
                "run" => Some(Command::Run),
                "check" => Some(Command::Check),
                "flatten" => Some(Command::Flatten),
                "dot" => Some(Command::Dot),
                "classes" => Some(Command::Classes),
                "doc" => Some(Command::Doc(
                    args.get(1).cloned().ok_or("doc: which element class?")?,
                )),
                "bench" => {
                    return Ok(Options {
                        command: Command::Bench(args[1..].to_vec()),
                        ..o
                    })
                }
                "cluster" => {
                    return Ok(Options {
                        command: Command::Cluster(args[1..].to_vec()),
                        ..o
                    })
                }
                "plan" => {
                    return Ok(Options {
                        command: Command::Plan(args[1..].to_vec()),
                        ..o
                    })
                }
                _ => None,
            };
            if let Some(c) = cmd {
                i = if matches!(c, Command::Doc(_)) { 2 } else { 1 };
                o.command = c;
            }
        }
        for (opt, v, at) in tokenize(&args[i..], i)? {
            match opt {
                Some("file") => o.file = Some(v),
                Some("expression") => o.expr = Some(v),
                Some("handler") => o.handlers.push(v),
                Some("exit-handler") => o.exit_handler = Some(v),
                Some("quit") => o.quit = true,
                Some("output") => o.output = Some(v),
                Some("port") => {
                    TcpPort::from_arg(&v)
                        .map_err(|_| format!("'--port' expects a TCP port number, not '{}'", v))?;
                    o.control_sockets.push((format!("TCP, {}", v), at));
                }
                Some("unix-socket") => o.control_sockets.push((format!("UNIX, {}", quote(&v)), at)),
                Some("threads") => {
                    o.threads = v
                        .parse()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or(format!("-j: bad thread count '{}'", v))?;
                    if o.threads > MAX_THREADS {
                        return Err(format!(
                            "-j: {} threads is too many (at most {})",
                            v, MAX_THREADS
                        ));
                    }
                }
                Some("simtime") => o.simtime = true,
                Some("allow-reconfigure") => o.reconfigure = true,
                Some("http") => http = Some((HttpListen::parse(&v)?, at)),
                Some("http-token-file") => token_file = Some(v),
                Some("http-read-only") => http_read_only = true,
                Some("log") => o.log_level = parse_level(&v)?,
                Some("log-format") => o.log_format = v.parse()?,
                Some("plan") => {
                    o.plan = Some(match v.as_str() {
                        "auto" => PlanMode::Auto,
                        "show" => PlanMode::Show,
                        _ => return Err(format!("--plan: 'auto' or 'show', not '{}'", v)),
                    })
                }
                Some("help") => o.command = Command::Help,
                Some("version") => o.command = Command::Version,
                _ => {
                    if let Some((k, val)) = v.split_once('=').filter(|(k, _)| is_param_name(k)) {
                        o.defines
                            .push((k.trim_start_matches('$').to_string(), val.to_string()));
                    } else if o.file.is_none() && o.expr.is_none() {
                        o.file = Some(v);
                    } else {
                        return Err(format!("unexpected argument '{}'", v));
                    }
                }
            }
        }
        match http {
            Some((listen, at)) => {
                let mut config = format!("PORT {}, ADDRESS {}", listen.port, listen.address);
                if let Some(f) = token_file {
                    config.push_str(&format!(", TOKEN_FILE {}", quote(&f)));
                }
                if http_read_only {
                    config.push_str(", READ_ONLY true");
                }
                o.http = Some((config, at));
            }
            None if token_file.is_some() || http_read_only => {
                return Err("'--http-token-file' and '--http-read-only' need '--http'".into())
            }
            None => {}
        }
        Ok(o)
    }
}

/// The argument of `--http`: `[ADDR:]PORT`, ADDR an IPv4 address or a bracketed IPv6 one.
struct HttpListen {
    address: std::net::IpAddr,
    port: u16,
}

impl HttpListen {
    fn parse(v: &str) -> Result<HttpListen, String> {
        let bad = || format!("'--http' expects [ADDR:]PORT, not '{}'", v);
        let (addr, port) = match v.rsplit_once(':') {
            Some((a, p)) => {
                let a = a
                    .strip_prefix('[')
                    .and_then(|a| a.strip_suffix(']'))
                    .unwrap_or(a);
                (a.parse().map_err(|_| bad())?, p)
            }
            None => (std::net::IpAddr::from([127, 0, 0, 1]), v),
        };
        Ok(HttpListen {
            address: addr,
            port: port.parse().map_err(|_| bad())?,
        })
    }
}

fn is_param_name(s: &str) -> bool {
    let s = s.strip_prefix('$').unwrap_or(s);
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &[&str]) -> Options {
        Options::parse(&s.iter().map(|x| x.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn click_style_options() {
        let o = parse(&[
            "-e",
            "Idle -> Discard",
            "-h",
            "c.count",
            "-h",
            "*.drops",
            "-q",
            "X=5",
            "--simtime",
        ]);
        assert_eq!(o.command, Command::Run);
        assert_eq!(o.expr.as_deref(), Some("Idle -> Discard"));
        assert_eq!(o.handlers, vec!["c.count", "*.drops"]);
        assert!(o.quit && o.simtime);
        assert_eq!(o.defines, vec![("X".to_string(), "5".to_string())]);
        let o = parse(&["conf.click", "-p", "7777", "-j", "2"]);
        assert_eq!(o.file.as_deref(), Some("conf.click"));
        assert_eq!(o.control_sockets, vec![("TCP, 7777".to_string(), 2)]);
        assert_eq!(o.threads, 2);
        let o = parse(&["-u", "/tmp/a b", "-p", "41930+", "--port=www"]);
        assert_eq!(
            o.control_sockets,
            vec![
                ("UNIX, \"/tmp/a b\"".to_string(), 1),
                ("TCP, 41930+".to_string(), 3),
                ("TCP, www".to_string(), 5)
            ]
        );
        for bad in ["x", "70000", "0+", "-1"] {
            let e = Options::parse(&["-p".to_string(), bad.to_string()]).unwrap_err();
            assert!(e.contains("expects a TCP port number"), "{e}");
        }
    }

    #[test]
    fn subcommands() {
        assert_eq!(
            parse(&["doc", "Counter"]).command,
            Command::Doc("Counter".into())
        );
        let o = parse(&["check", "-f", "x.click"]);
        assert_eq!(o.command, Command::Check);
        assert_eq!(o.file.as_deref(), Some("x.click"));
        assert!(Options::parse(&["--bogus".to_string()]).is_err());
        assert!(Options::parse(&["--h".to_string()]).is_err(), "ambiguous");
        assert!(Options::parse(&["-j".to_string(), "0".to_string()]).is_err());
        assert_eq!(parse(&["-j", "256"]).threads, MAX_THREADS);
        let e = Options::parse(&["-j".to_string(), "100000".to_string()]).unwrap_err();
        assert!(e.contains("at most 256"), "{e}");
    }

    #[test]
    fn http_options() {
        assert_eq!(parse(&["x.click"]).http, None);
        let o = parse(&["x.click", "--http", "7780"]);
        assert_eq!(
            o.http,
            Some(("PORT 7780, ADDRESS 127.0.0.1".to_string(), 2))
        );
        let o = parse(&[
            "--http=[::1]:0",
            "--http-token-file",
            "/tmp/a token",
            "--http-read-only",
        ]);
        assert_eq!(
            o.http.unwrap().0,
            "PORT 0, ADDRESS ::1, TOKEN_FILE \"/tmp/a token\", READ_ONLY true"
        );
        let o = parse(&["--http", "0.0.0.0:8080"]);
        assert_eq!(o.http.unwrap().0, "PORT 8080, ADDRESS 0.0.0.0");
        for bad in ["x", "70000", "localhost:80", "1.2.3.4:"] {
            let e = Options::parse(&["--http".to_string(), bad.to_string()]).unwrap_err();
            assert!(e.contains("expects [ADDR:]PORT"), "{e}");
        }
        let e = Options::parse(&["--http-read-only".to_string()]).unwrap_err();
        assert!(e.contains("need '--http'"), "{e}");
    }

    #[test]
    fn bundled_and_attached_short_options() {
        let o = parse(&["SCRIPT", "-qh", "c.program", "-o-", "--sim", "--threads=2"]);
        assert_eq!(o.file.as_deref(), Some("SCRIPT"));
        assert!(o.quit && o.simtime);
        assert_eq!(o.handlers, vec!["c.program"]);
        assert_eq!(o.output.as_deref(), Some("-"));
        assert_eq!(o.threads, 2);
        let o = parse(&["-qo/dev/null", "-e", "Idle", "-hc.count", "-x", "c.count"]);
        assert_eq!(o.exit_handler.as_deref(), Some("c.count"));
        assert_eq!(o.output.as_deref(), Some("/dev/null"));
        assert_eq!(o.handlers, vec!["c.count"]);
        assert_eq!(o.expr.as_deref(), Some("Idle"));
        assert!(Options::parse(&["-qZ".to_string()]).is_err());
        assert!(Options::parse(&["-qh".to_string()]).is_err());
    }
}
