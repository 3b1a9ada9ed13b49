//! TCP sequence-number translation of TCPRewriter flows (Click's delta transitions): when an
//! element upstream (FTPPortMapper) changes the length of a flow's payload, it records the
//! change as a delta that applies from a trigger sequence number on. Later sequence numbers
//! of that direction are moved by the delta, and acknowledgement numbers (and SACK blocks)
//! of the other direction moved back, with the TCP checksum updated incrementally.

use sluice_wire::checksum::update32;

use super::rewrite::update_words;

/// Triggers more than this far behind a newer one (or behind the sequence numbers seen) are
/// forgotten: their delta becomes the base delta, as in Click.
const FORGET: u32 = 1 << 30;

/// Whether sequence number `a` is at or after `b` (modulo 2^32).
fn seq_geq(a: u32, b: u32) -> bool {
    a.wrapping_sub(b) as i32 >= 0
}

/// The deltas of one direction: the delta of every sequence number before the oldest
/// trigger (`base`), then (trigger, delta) from the oldest trigger to the newest.
#[derive(Clone, Debug, Default)]
struct Direction {
    base: i32,
    triggers: Vec<(u32, i32)>,
}

impl Direction {
    /// The delta in effect after the newest trigger.
    fn newest(&self) -> i32 {
        self.triggers.last().map_or(self.base, |&(_, d)| d)
    }

    /// Whether this direction moves any sequence number.
    fn active(&self) -> bool {
        self.base != 0 || !self.triggers.is_empty()
    }

    /// The translation of sequence number `seq`.
    fn seq(&self, seq: u32) -> u32 {
        let d = self
            .triggers
            .iter()
            .rev()
            .find(|&&(t, _)| seq_geq(seq, t))
            .map_or(self.base, |&(_, d)| d);
        seq.wrapping_add(d as u32)
    }

    /// The translation back of acknowledgement number `ack` (of the other direction).
    fn ack(&self, ack: u32) -> u32 {
        let d = self
            .triggers
            .iter()
            .rev()
            .find(|&&(t, d)| seq_geq(ack.wrapping_sub(d as u32), t))
            .map_or(self.base, |&(_, d)| d);
        ack.wrapping_sub(d as u32)
    }

    /// Forgets every trigger when `seq` is 2^30 past the newest one.
    fn advance(&mut self, seq: u32) {
        if let Some(&(t, d)) = self.triggers.last() {
            if seq_geq(seq, t.wrapping_add(FORGET)) {
                self.base = d;
                self.triggers.clear();
            }
        }
    }
}

/// The sequence-number deltas of a flow, forward (0) and reply (1).
#[derive(Clone, Debug, Default)]
pub struct SeqDeltas([Direction; 2]);

impl SeqDeltas {
    /// Records that the payload of direction `dir` changed length by `delta` before sequence
    /// number `trigger`: sequence numbers from `trigger` on move by `delta` more than those
    /// before. A second change at the same trigger replaces the first. Returns false (nothing
    /// recorded) when `trigger` is before the newest trigger, as Click refuses it.
    pub fn update(&mut self, dir: usize, trigger: u32, delta: i32) -> bool {
        let d = &mut self.0[dir];
        if let Some(&(t, _)) = d.triggers.last() {
            if !seq_geq(trigger, t) {
                return false;
            }
            if t == trigger {
                d.triggers.pop();
            }
        }
        let prev = d.newest();
        // Older triggers 2^30 or more behind the new one are forgotten.
        if let Some(k) = d
            .triggers
            .iter()
            .rposition(|&(t, _)| seq_geq(trigger, t.wrapping_add(FORGET)))
        {
            d.base = d.triggers[k].1;
            d.triggers.drain(..=k);
        }
        d.triggers.push((trigger, prev.wrapping_add(delta)));
        true
    }

    /// Whether any sequence number is moved.
    pub fn any(&self) -> bool {
        self.0.iter().any(Direction::active)
    }

    /// The delta of direction `dir` after its newest trigger (the `table` handler's `seq`).
    pub fn newest(&self, dir: usize) -> i32 {
        self.0[dir].newest()
    }

    /// Translates TCP segment `t` (unchanged when shorter than its header) of a packet of
    /// direction `dir`: its sequence number by this direction's deltas, its acknowledgement
    /// number and SACK blocks back by the other direction's, updating its checksum.
    pub fn apply(&mut self, dir: usize, t: &mut [u8]) {
        if t.len() < 18 || t.len() < usize::from(t[12] >> 4) * 4 {
            return;
        }
        let word =
            |t: &[u8], at: usize| u32::from_be_bytes([t[at], t[at + 1], t[at + 2], t[at + 3]]);
        let mut sum = u16::from_be_bytes([t[16], t[17]]);
        let seq = word(t, 4);
        self.0[dir].advance(seq);
        let [fwd, rev] = [&self.0[dir], &self.0[1 - dir]];
        if fwd.active() {
            let new = fwd.seq(seq);
            sum = update32(sum, seq, new);
            t[4..8].copy_from_slice(&new.to_be_bytes());
        }
        if rev.active() {
            let ack = word(t, 8);
            let new = rev.ack(ack);
            sum = update32(sum, ack, new);
            t[8..12].copy_from_slice(&new.to_be_bytes());
            let off = usize::from(t[12] >> 4) * 4;
            // A lone timestamp option (NOP NOP TIMESTAMP) has no SACK blocks.
            if off > 32 || (off == 32 && t[20..24] != [1, 1, 8, 10]) {
                sum = translate_sack(rev, &mut t[20..off], sum);
            }
        }
        t[16..18].copy_from_slice(&sum.to_be_bytes());
    }
}

/// Translates back the SACK blocks of TCP options `opts` (which start at an even offset of
/// the header) by `rev`'s deltas; returns checksum `sum` updated.
fn translate_sack(rev: &Direction, opts: &mut [u8], sum: u16) -> u16 {
    let mut before = [0u8; 40];
    before[..opts.len()].copy_from_slice(opts);
    let mut at = 0;
    while at < opts.len() {
        match opts[at] {
            0 => break,
            1 => at += 1,
            kind => {
                let Some(&len) = opts.get(at + 1) else { break };
                let len = usize::from(len);
                if kind == 5 && (at + len > opts.len() || len % 8 != 2) {
                    break;
                }
                if len < 2 {
                    break;
                }
                if kind == 5 {
                    for b in opts[at + 2..at + len].chunks_exact_mut(4) {
                        let v = rev.ack(u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
                        b.copy_from_slice(&v.to_be_bytes());
                    }
                }
                at += len;
            }
        }
    }
    update_words(sum, &before[..opts.len()], opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_apply_from_their_triggers_on() {
        let mut s = SeqDeltas::default();
        assert!(s.update(0, 30, -12));
        assert!(s.update(0, 65, 1));
        assert!(!s.update(0, 40, 5));
        let f = &s.0[0];
        assert_eq!((f.seq(1), f.seq(30), f.seq(64), f.seq(65)), (1, 18, 52, 54));
        // Acknowledgements of the other side are moved back.
        assert_eq!((f.ack(1), f.ack(18), f.ack(30), f.ack(54)), (1, 30, 42, 65));
        assert_eq!(s.newest(0), -11);
        // Replacing a trigger's delta.
        assert!(s.update(0, 65, 3));
        assert_eq!(s.newest(0), -9);
    }

    #[test]
    fn triggers_are_forgotten_a_gigabyte_later() {
        let mut s = SeqDeltas::default();
        s.update(0, 30, -12);
        s.0[0].advance(1_100_000_000);
        assert!(s.0[0].triggers.is_empty());
        assert_eq!(s.0[0].seq(0), (-12i32) as u32);
    }
}
