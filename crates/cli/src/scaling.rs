//! `sluice bench scaling`: packets/s across worker threads (SMP Click's experiments).

/// Runs the scaling benchmarks; `args[0]` is the workload name (`scaling...`).
pub fn main(args: &[String]) -> Result<(), ()> {
    let _ = args;
    eprintln!("bench scaling: not implemented yet");
    Err(())
}
