//! Trace I/O: pcap files (FromDump, ToDump) and IP summary dumps (FromIPSummaryDump,
//! ToIPSummaryDump), and what the two writers share.

use std::fs::File;
use std::io::{BufWriter, Write};

use sluice_core::{Batch, Cx, ElementClass, InitCx, Packet, PullNotes, BATCH_MAX};

pub mod from_dump;
mod from_ip_summary_dump;
pub mod ipsumdump;
mod md5;
pub mod to_dump;
mod to_ip_summary_dump;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[
    from_dump::CLASS,
    from_ip_summary_dump::CLASS,
    to_dump::CLASS,
    to_ip_summary_dump::CLASS,
];

/// Where the extra-length annotation lives in `Anno::user` (bytes 12..16, little-endian),
/// until the engine has a dedicated field: the bytes a capture cut off (original length minus
/// captured length). FromDump sets it; ToDump with `EXTRA_LENGTH true` adds it back.
const EXTRA_LENGTH_ANNO: std::ops::Range<usize> = 12..16;

/// The extra-length annotation.
pub fn extra_length(p: &Packet) -> u32 {
    let u = &p.anno().user[EXTRA_LENGTH_ANNO];
    u32::from_le_bytes([u[0], u[1], u[2], u[3]])
}

/// Sets the extra-length annotation.
pub fn set_extra_length(p: &mut Packet, n: u32) {
    p.anno_mut().user[EXTRA_LENGTH_ANNO].copy_from_slice(&n.to_le_bytes());
}

/// Opens a trace writer's FILENAME: standard output for `-`, else the file (created, or
/// truncated), written through a buffer of `capacity` bytes. An error reads `FILENAME: error`.
fn create_output(filename: &str, capacity: usize) -> Result<Box<dyn Write + Send>, String> {
    Ok(if filename == "-" {
        Box::new(BufWriter::new(std::io::stdout()))
    } else {
        let f = File::create(filename).map_err(|e| format!("{filename}: {e}"))?;
        Box::new(BufWriter::with_capacity(capacity, f))
    })
}

/// The task of a trace writer whose input is pull and that has no output: it pulls the
/// packets to write, sleeping while the upstream queues are empty.
#[derive(Default)]
struct Drain(Option<PullNotes>);

impl Drain {
    /// Adds the task if the element's input is pull and it has no output.
    fn initialize(&mut self, cx: &mut InitCx) {
        if !cx.input_is_push(0) && cx.noutputs() == 0 {
            self.0 = Some(cx.add_pull_task(0, true));
        }
    }
}

/// A trace writer (ToDump, ToIPSummaryDump): it writes every packet that reaches it, and then
/// passes the packets on by output 0 if it has one; with a pull input and no output, its
/// [`Drain`] task pulls them.
trait TraceWriter {
    /// Writes the packets of `b`.
    fn write_batch(&mut self, b: &Batch, cx: &mut Cx);

    /// The element's task.
    fn drain(&self) -> &Drain;

    /// The element's push: writes `batch`, then pushes it out of output 0 if there is one.
    fn write_push(&mut self, batch: Batch, cx: &mut Cx) {
        self.write_batch(&batch, cx);
        if cx.noutputs() > 0 {
            cx.push(0, batch);
        }
    }

    /// The element's pull: pulls up to `max` packets and writes them on their way.
    fn write_pull(&mut self, max: usize, cx: &mut Cx) -> Batch {
        let b = cx.pull(0, max);
        self.write_batch(&b, cx);
        b
    }

    /// A run of the [`Drain`] task: pulls a batch and writes it; true if it got packets.
    fn write_task(&mut self, cx: &mut Cx) -> bool {
        if self.drain().0.is_none() {
            return false;
        }
        let b = cx.pull(0, BATCH_MAX);
        let got = !b.is_empty();
        self.write_batch(&b, cx);
        drop(b);
        if let Some(notes) = &self.drain().0 {
            cx.reschedule_pull(notes, got);
        }
        got
    }
}
