//! `sluice plan`: chooses cloning, pipelining or a mix for a configuration on N threads.
/// Runs `sluice plan ARGS`; an error is a message for the user.
pub fn main(_args: &[String]) -> Result<(), String> {
    Err("plan: not yet".into())
}
