//! `sluice`: runs, checks and inspects Click-language router configurations.
//!
//! Click's command line works unchanged (`sluice FILE`, `-f FILE`, `-e EXPR`, `-h
//! ELEM.HANDLER`, `-x ELEM.HANDLER`, `-q`, `-o FILE`, `-p PORT`, `-u PATH`, `-j N`,
//! `--simtime`, `NAME=VALUE`), besides Sluice's subcommands `run`, `check`, `flatten`, `dot`, `doc CLASS`, `classes` and
//! `bench`.

#![forbid(unsafe_code)]

mod bench;
mod logging;
mod options;
mod scaling;

use std::process::ExitCode;

use options::{Command, Options};
use sluice_core::{HandlerError, Reconfigure, Router, RouterOptions};
use sluice_lang::{FlatConfig, FlatElement, Landmark};

fn main() -> ExitCode {
    // Arguments are bytes (`-e` may carry any configuration text).
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| sluice_lang::decode_config(std::os::unix::ffi::OsStrExt::as_bytes(a.as_os_str())))
        .collect();
    let opts = match Options::parse(&args) {
        Ok(o) => o,
        Err(msg) => {
            eprintln!("sluice: {}", msg);
            eprintln!("Try 'sluice --help' for more information.");
            return ExitCode::from(1);
        }
    };
    match run(opts) {
        Ok(status) => ExitCode::from(status),
        Err(()) => ExitCode::from(1),
    }
}

/// Every element class the command knows: the element library, WasmElement and HTTPServer.
fn library() -> sluice_core::Library {
    let mut lib = sluice_elements::library();
    lib.add(sluice_wasm::CLASSES);
    lib.add(sluice_http::CLASSES);
    lib
}

fn run(opts: Options) -> Result<u8, ()> {
    logging::init(opts.log_level, opts.log_format);
    if opts.plan == Some(options::PlanMode::Show) && matches!(opts.command, Command::Run) {
        print!("{}", config_text(&opts)?);
        return Ok(0);
    }
    let done = match &opts.command {
        Command::Help => {
            print!("{}", options::USAGE);
            Ok(())
        }
        Command::Version => {
            println!("sluice {}", sluice_core::router::VERSION);
            Ok(())
        }
        Command::Classes => {
            for c in crate::library().classes() {
                println!("{}", c.name);
            }
            Ok(())
        }
        Command::Doc(class) => {
            let lib = crate::library();
            match lib.get(class) {
                Some(c) => {
                    print!("{}", c.doc());
                    Ok(())
                }
                None => {
                    eprintln!("sluice: no element class '{}'", class);
                    Err(())
                }
            }
        }
        Command::Bench(args) => bench::main(args),
        Command::Cluster(args) => {
            sluice_cluster::main(args).map_err(|e| eprintln!("sluice: {}", e))
        }
        Command::Plan(args) => sluice_plan::main(args).map_err(|e| eprintln!("sluice: {}", e)),
        Command::Flatten => {
            let (flat, _) = load(&opts)?;
            let mut text = sluice_lang::unparse(&flat);
            if !text.ends_with('\n') {
                text.push('\n');
            }
            std::io::Write::write_all(&mut std::io::stdout(), &sluice_lang::encode_config(&text))
                .map_err(|e| eprintln!("sluice: {}", e))
        }
        Command::Dot => {
            let (flat, _) = load(&opts)?;
            print!("{}", sluice_lang::to_dot(&flat));
            Ok(())
        }
        Command::Check => {
            let (flat, source) = load(&opts)?;
            build(flat, source, &opts, true).map(|_| ())
        }
        Command::Run => return run_router(&opts),
    };
    done.map(|()| 0)
}

/// How messages name the configuration: its file, `config` for `-e`, `<stdin>`.
fn config_name(opts: &Options) -> &str {
    match (&opts.expr, &opts.file) {
        (Some(_), _) => "config",
        (None, Some(f)) if f != "-" => f,
        _ => "<stdin>",
    }
}

/// An I/O error as Click words it (`No such file or directory`), without Rust's
/// `(os error N)`.
fn io_message(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Reads and parses the configuration named by the options (file, `-e`, or standard input).
/// The configuration text: `-e`, the file, or stdin; under `--plan`, placed as `sluice
/// plan` chooses.
fn config_text(opts: &Options) -> Result<String, ()> {
    let text = match (&opts.expr, &opts.file) {
        (Some(e), _) => e.clone(),
        (None, Some(f)) if f != "-" => match std::fs::read(f) {
            Ok(t) => sluice_lang::decode_config(&t),
            Err(e) => {
                eprintln!("{}: {}", f, io_message(&e));
                return Err(());
            }
        },
        _ => {
            let mut t = Vec::new();
            if let Err(e) = std::io::Read::read_to_end(&mut std::io::stdin(), &mut t) {
                eprintln!("<stdin>: {}", io_message(&e));
                return Err(());
            }
            sluice_lang::decode_config(&t)
        }
    };
    if opts.plan.is_none() {
        return Ok(text);
    }
    let planned =
        sluice_plan::auto::plan_config(&text, config_name(opts), &opts.defines, opts.threads)
            .map_err(|e| eprintln!("sluice: {}", e))?;
    eprintln!("{}", planned.summary);
    Ok(planned.text)
}

/// Under `--plan auto`, the policy that re-plans the running configuration `text`; `None`
/// (with a message) when it cannot be calibrated: the router then balances greedily.
fn replanner(opts: &Options, text: &str) -> Option<sluice_core::threads::Replan> {
    if opts.plan != Some(options::PlanMode::Auto) || opts.threads < 2 {
        return None;
    }
    sluice_plan::auto::replanner(text, opts.threads)
        .map_err(|e| eprintln!("sluice: {}; adaptive placement stays greedy", e))
        .ok()
}

fn load(opts: &Options) -> Result<(FlatConfig, String), ()> {
    let name = config_name(opts);
    let text = config_text(opts)?;
    let source = text.clone();
    let lib = crate::library();
    let is_class = |n: &str| lib.get(n).is_some();
    match sluice_lang::parse_config_with_classes(&text, name, &opts.defines, &is_class) {
        Ok(flat) => {
            if let Some(out) = &opts.output {
                let flat_text = sluice_lang::encode_config(&sluice_lang::unparse(&flat));
                let res = if out == "-" {
                    std::io::Write::write_all(&mut std::io::stdout(), &flat_text)
                } else {
                    std::fs::write(out, flat_text)
                };
                if let Err(e) = res {
                    eprintln!("{}: {}", out, io_message(&e));
                    return Err(());
                }
            }
            Ok((flat, source))
        }
        Err(diags) => {
            for d in diags {
                eprintln!("{}", d);
            }
            Err(())
        }
    }
}

/// Adds the ControlSockets of `-p` and `-u` under Click's names; messages about them name the
/// option's position on the command line. In a hot-swapped configuration they try to open
/// their socket once more a second later, quietly, by when they have taken over their
/// predecessors' socket.
fn add_control_sockets(flat: &mut FlatConfig, opts: &Options, swapped: bool) {
    let file: std::sync::Arc<str> = "<command line>".into();
    for (i, (config, at)) in opts.control_sockets.iter().enumerate() {
        let name = match i {
            0 => "click_driver@@ControlSocket".to_string(),
            _ => format!("click_driver@@ControlSocket@{}", i),
        };
        flat.elements.push(FlatElement {
            name,
            class: "ControlSocket".into(),
            config: if swapped {
                format!("{config}, RETRIES 1, RETRY_WARNINGS false")
            } else {
                config.clone()
            },
            landmark: Landmark {
                file: file.clone(),
                line: *at,
            },
        });
    }
}

/// Adds the HTTPServer of `--http` as `sluice@@HTTPServer`. In a hot-swapped configuration
/// it takes over its predecessor's socket.
fn add_http_server(flat: &mut FlatConfig, opts: &Options) {
    if let Some((config, at)) = &opts.http {
        flat.elements.push(FlatElement {
            name: "sluice@@HTTPServer".into(),
            class: "HTTPServer".into(),
            config: config.clone(),
            landmark: Landmark {
                file: "<command line>".into(),
                line: *at,
            },
        });
    }
}

fn build(flat: FlatConfig, source: String, opts: &Options, check_only: bool) -> Result<Router, ()> {
    build_with(flat, source, opts, check_only, None)
}

/// [`build`] with adaptive placement's policy.
fn build_with(
    mut flat: FlatConfig,
    source: String,
    opts: &Options,
    check_only: bool,
    replan: Option<sluice_core::threads::Replan>,
) -> Result<Router, ()> {
    add_control_sockets(&mut flat, opts, false);
    add_http_server(&mut flat, opts);
    let lib = crate::library();
    let ropts = RouterOptions {
        simtime: opts.simtime,
        source,
        check_only,
        threads: opts.threads,
        reconfigure: opts.reconfigure.then(|| reconfigure(opts, &lib)),
        // A re-planning policy reads each task's packets.
        element_stats: opts.http.is_some() || replan.is_some(),
        replan,
    };
    Router::new(flat, &lib, ropts).map_err(|errors| {
        for e in errors {
            eprintln!("{}", e);
        }
        eprintln!("Router could not be initialized!");
    })
}

/// How `hotconfig` builds a configuration: parsed with the command line's parameters, plus
/// the command line's ControlSockets and HTTPServer.
fn reconfigure(opts: &Options, lib: &sluice_core::Library) -> Reconfigure {
    let opts = opts.clone();
    let classes = lib.clone();
    Reconfigure {
        library: lib.clone(),
        parse: std::sync::Arc::new(move |text: &str| {
            let is_class = |n: &str| classes.get(n).is_some();
            let mut flat =
                sluice_lang::parse_config_with_classes(text, "config", &opts.defines, &is_class)
                    .map_err(|d| d.iter().map(|e| e.to_string()).collect::<Vec<_>>())?;
            add_control_sockets(&mut flat, &opts, true);
            add_http_server(&mut flat, &opts);
            Ok(flat)
        }),
    }
}

/// Runs the router; the exit status is 0, or the `-x` handler's value.
fn run_router(opts: &Options) -> Result<u8, ()> {
    let (flat, source) = load(opts)?;
    let replan = replanner(opts, &source);
    let mut router = build_with(flat, source, opts, false, replan)?;
    sluice_core::signals::install();
    if !opts.quit && router.nelements() == 0 {
        eprintln!(
            "warning: {}: configuration has no elements, exiting",
            config_name(opts)
        );
    } else if !opts.quit {
        router.run();
    }
    router.cleanup();
    let printed = print_handlers(&mut router, &opts.handlers);
    // An element that lost output (a write error, reported where it happened) fails the run.
    if router.run_failed() {
        return Err(());
    }
    match &opts.exit_handler {
        Some(h) => Ok(exit_status(&mut router, h)),
        None => printed.map(|()| 0),
    }
}

/// Click's `-x`: the handler's value as an integer, or a boolean (true is 0, false 1); 255
/// with a message when it cannot be read or is neither.
fn exit_status(router: &mut Router, path: &str) -> u8 {
    use sluice_lang::args::FromArg;
    match router.read_path(path) {
        Ok(v) => match (i64::from_arg(&v), bool::from_arg(&v)) {
            (Ok(n), _) => n as u8,
            (_, Ok(b)) => u8::from(!b),
            _ => {
                eprintln!("exit handler value should be integer");
                255
            }
        },
        Err(HandlerError::NoElement(e)) => {
            eprintln!("no element named '{}'", e);
            255
        }
        Err(HandlerError::Failed(m)) => {
            eprintln!("{}: {}", path, m);
            255
        }
        Err(_) => {
            eprintln!("no '{}' read handler", path);
            255
        }
    }
}

/// Prints `-h` handlers after the run, as Click does. `ELEM.HANDLER` names an element, else
/// a glob over element names (`'*.count'`), else an element class (`Counter.count`); a name
/// without a dot is a router handler (`-h list`). A glob or class selects the elements that
/// have the handler. The value is printed alone when a single `-h` names one element;
/// otherwise each as `NAME:`, the value, and a blank line. Every value ends with a newline.
fn print_handlers(router: &mut Router, patterns: &[String]) -> Result<(), ()> {
    let mut ok = true;
    for p in patterns {
        let (paths, named) = match expand_handler(router, p) {
            Ok((paths, several)) => (paths, several || patterns.len() > 1),
            Err(msg) => {
                eprintln!("{}", msg);
                ok = false;
                continue;
            }
        };
        for path in paths {
            match router.read_path(&path) {
                Ok(mut v) => {
                    if !v.is_empty() && !v.ends_with('\n') {
                        v.push('\n');
                    }
                    if named {
                        print!("{}:\n{}\n", path, v);
                    } else {
                        print!("{}", v);
                    }
                }
                Err(e) => {
                    eprintln!("{}", handler_error(&path, e));
                    ok = false;
                }
            }
        }
    }
    if ok {
        Ok(())
    } else {
        Err(())
    }
}

/// The handler paths one `-h` argument names, and whether it could name several (a glob or a
/// class); Click's error message when it names no element.
fn expand_handler(router: &Router, arg: &str) -> Result<(Vec<String>, bool), String> {
    let Some((elem, handler)) = arg.split_once('.') else {
        return Ok((vec![arg.to_string()], false));
    };
    if router.element_index(elem).is_some() {
        return Ok((vec![arg.to_string()], false));
    }
    let is_glob = |s: &str| s.contains(['*', '?', '[']);
    let flat = router.flat_config();
    let elements: Vec<usize> = (0..router.nelements())
        .filter(|&e| {
            if is_glob(elem) {
                sluice_core::router::glob_match(elem, router.element_name(e))
            } else {
                flat.elements[e].class == elem
            }
        })
        .collect();
    if elements.is_empty() {
        return Err(if is_glob(elem) {
            format!("no element matching '{}'", elem)
        } else {
            format!("no element '{}'", elem)
        });
    }
    let mut paths = Vec::new();
    for e in elements {
        for (h, mode) in router.handler_list(Some(e)) {
            let wanted = if is_glob(handler) {
                sluice_core::router::glob_match(handler, &h)
            } else {
                h == handler
            };
            if wanted && mode.contains('r') {
                paths.push(format!("{}.{}", router.element_name(e), h));
            }
        }
    }
    Ok((paths, true))
}

/// Click's wording for a handler that cannot be read.
fn handler_error(path: &str, e: HandlerError) -> String {
    match e {
        HandlerError::NoElement(_) | HandlerError::NoHandler(_) => {
            format!("no '{}' handler", path)
        }
        HandlerError::NotReadable(_) => format!("'{}' is a write handler", path),
        e => format!("{}: {}", path, e),
    }
}
