//! `sluice bench`: built-in benchmark workloads.

/// Runs the benchmark workloads named in `args`.
pub fn main(_args: &[String]) -> Result<(), ()> {
    eprintln!("sluice bench: no workloads yet");
    Err(())
}
