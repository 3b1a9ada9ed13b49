//! `sluice cluster`: several Sluice servers acting as one router (RouteBricks, SPEC C6).
//!
//! A cluster is described once ([`desc`]); [`build`] turns the description into one Click
//! configuration per node, [`up`] runs the nodes in network namespaces for testing, [`plan`]
//! answers how many servers a router of N ports needs, [`reorder`] measures reordering
//! between two captures, and [`sim`] simulates clusters larger than a machine runs, with
//! the same Direct VLB code as the DirectVLB element.

pub mod build;
pub mod desc;
pub mod plan;
pub mod reorder;
pub mod sim;
pub mod up;

/// Usage of `sluice cluster`.
pub const USAGE: &str = "\
Usage: sluice cluster COMMAND [ARGS...]

Commands:
  build DESC [--out DIR]      write each node's configuration (see `sluice cluster build --help`)
  up DESC [OPTIONS]           run the cluster locally, one network namespace per node
  down DESC [OPTIONS]         stop what `up` started and remove its namespaces
  plan [OPTIONS]              servers needed for N ports of rate R (see `sluice cluster plan --help`)
  reorder INGRESS EGRESS      reordering between two captures (see `sluice cluster reorder --help`)
  sim [OPTIONS]               packet-level simulation of a Direct VLB mesh (see `sluice cluster sim --help`)
";

/// Runs `sluice cluster ARGS`; an error is a message for the user.
pub fn main(args: &[String]) -> Result<(), String> {
    let rest = args.get(1..).unwrap_or(&[]);
    match args.first().map(String::as_str) {
        Some("build") => build::main(rest),
        Some("up") => up::main_up(rest),
        Some("down") => up::main_down(rest),
        Some("plan") => plan::main(rest),
        Some("reorder") => reorder::main(rest),
        Some("sim") => sim::main(rest),
        Some("-h" | "--help") | None => {
            print!("{}", USAGE);
            Ok(())
        }
        Some(other) => Err(format!("cluster: unknown command '{}'\n{}", other, USAGE)),
    }
}
