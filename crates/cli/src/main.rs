//! `sluice`: runs, checks and inspects Click-language router configurations.
//!
//! Click's command line works unchanged (`sluice FILE`, `-f FILE`, `-e EXPR`, `-h
//! ELEM.HANDLER`, `-q`, `-o FILE`, `-p PORT`, `-u PATH`, `-j N`, `--simtime`, `NAME=VALUE`),
//! besides Sluice's subcommands `run`, `check`, `flatten`, `dot`, `doc CLASS`, `classes` and
//! `bench`.

mod bench;
mod options;
mod scaling;

use std::process::ExitCode;

use options::{Command, Options};
use sluice_core::{Router, RouterOptions};
use sluice_lang::FlatConfig;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = match Options::parse(&args) {
        Ok(o) => o,
        Err(msg) => {
            eprintln!("sluice: {}", msg);
            eprintln!("Try 'sluice --help' for more information.");
            return ExitCode::from(1);
        }
    };
    match run(opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(()) => ExitCode::from(1),
    }
}

fn run(opts: Options) -> Result<(), ()> {
    match &opts.command {
        Command::Help => {
            print!("{}", options::USAGE);
            Ok(())
        }
        Command::Version => {
            println!("sluice {}", sluice_core::router::VERSION);
            Ok(())
        }
        Command::Classes => {
            for c in sluice_elements::library().classes() {
                println!("{}", c.name);
            }
            Ok(())
        }
        Command::Doc(class) => {
            let lib = sluice_elements::library();
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
        Command::Flatten => {
            let (flat, _) = load(&opts)?;
            let text = sluice_lang::unparse(&flat);
            print!("{}{}", text, if text.ends_with('\n') { "" } else { "\n" });
            Ok(())
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
        Command::Run => run_router(&opts),
    }
}

/// Reads and parses the configuration named by the options (file, `-e`, or standard input).
fn load(opts: &Options) -> Result<(FlatConfig, String), ()> {
    let (mut text, name) = match (&opts.expr, &opts.file) {
        (Some(e), _) => (e.clone(), "<expr>".to_string()),
        (None, Some(f)) if f != "-" => match std::fs::read_to_string(f) {
            Ok(t) => (t, f.clone()),
            Err(e) => {
                eprintln!("sluice: {}: {}", f, e);
                return Err(());
            }
        },
        _ => {
            let mut t = String::new();
            if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut t) {
                eprintln!("sluice: <stdin>: {}", e);
                return Err(());
            }
            (t, "<stdin>".to_string())
        }
    };
    let source = text.clone();
    for (i, cs) in opts.control_sockets.iter().enumerate() {
        text.push_str(&format!(
            "\nsluice_control_socket@{} :: ControlSocket({});\n",
            i, cs
        ));
    }
    match sluice_lang::parse_config(&text, &name, &opts.defines) {
        Ok(flat) => {
            if let Some(out) = &opts.output {
                let flat_text = sluice_lang::unparse(&flat);
                let res = if out == "-" {
                    print!("{}", flat_text);
                    Ok(())
                } else {
                    std::fs::write(out, flat_text)
                };
                if let Err(e) = res {
                    eprintln!("sluice: {}: {}", out, e);
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

fn build(flat: FlatConfig, source: String, opts: &Options, check_only: bool) -> Result<Router, ()> {
    let lib = sluice_elements::library();
    let ropts = RouterOptions {
        simtime: opts.simtime,
        source,
        check_only,
        threads: opts.threads,
    };
    Router::new(flat, &lib, ropts).map_err(|errors| {
        for e in errors {
            eprintln!("{}", e);
        }
        eprintln!("Router could not be initialized!");
    })
}

fn run_router(opts: &Options) -> Result<(), ()> {
    let (flat, source) = load(opts)?;
    let mut router = build(flat, source, opts, false)?;
    sluice_core::signals::install();
    if !opts.quit {
        router.run();
    }
    router.cleanup();
    let handlers = print_handlers(&mut router, &opts.handlers);
    // An element that lost output (a write error, reported where it happened) fails the run.
    if router.run_failed() {
        return Err(());
    }
    handlers
}

/// Prints `-h` handlers after the run, as Click does: a lone handler's value by itself;
/// several, each as `NAME:` then its value and a blank line.
fn print_handlers(router: &mut Router, patterns: &[String]) -> Result<(), ()> {
    let mut paths = Vec::new();
    let mut ok = true;
    for p in patterns {
        if p.contains('*') || p.contains('?') {
            let found = router.expand_handler_glob(p);
            if found.is_empty() {
                eprintln!("sluice: no handlers match '{}'", p);
                ok = false;
            }
            paths.extend(found);
        } else {
            paths.push(p.clone());
        }
    }
    let named = paths.len() > 1 || patterns.iter().any(|p| p.contains('*') || p.contains('?'));
    for path in &paths {
        match router.read_path(path) {
            Ok(v) => {
                if named {
                    print!("{}:\n{}\n", path, v);
                } else {
                    print!("{}", v);
                }
            }
            Err(e) => {
                eprintln!("sluice: {}: {}", path, e);
                ok = false;
            }
        }
    }
    if ok {
        Ok(())
    } else {
        Err(())
    }
}
