//! The receiver's anti-replay window of RFC 4303 §3.4.3: the highest sequence number
//! authenticated so far and a bitmap of which of the `size` numbers below it were received.

/// Anti-replay state of one inbound security association.
#[derive(Clone, Debug)]
pub struct ReplayWindow {
    size: u32,
    top: u32,
    bits: Box<[u64]>,
}

/// The largest window accepted.
pub const MAX_WINDOW: u32 = 4096;

impl ReplayWindow {
    /// A window of `size` sequence numbers (0 turns replay checking off).
    pub fn new(size: u32) -> ReplayWindow {
        let words = size.min(MAX_WINDOW).div_ceil(64) as usize;
        ReplayWindow {
            size: size.min(MAX_WINDOW),
            top: 0,
            bits: vec![0; words].into_boxed_slice(),
        }
    }

    /// The window size.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// The highest sequence number authenticated so far.
    pub fn top(&self) -> u32 {
        self.top
    }

    fn slot(&self, seq: u32) -> (usize, u64) {
        let i = seq as usize % (self.bits.len() * 64);
        (i / 64, 1u64 << (i % 64))
    }

    /// True if `seq` may be new: checked before the packet is authenticated.
    pub fn check(&self, seq: u32) -> bool {
        if self.size == 0 {
            return true;
        }
        if seq == 0 {
            return false;
        }
        if seq > self.top {
            return true;
        }
        if self.top - seq >= self.size {
            return false;
        }
        let (w, b) = self.slot(seq);
        self.bits[w] & b == 0
    }

    /// Records `seq` as received: called once the packet is authenticated and
    /// [`check`](Self::check) passed.
    pub fn accept(&mut self, seq: u32) {
        if self.size == 0 {
            self.top = self.top.max(seq);
            return;
        }
        if seq > self.top {
            if seq - self.top >= self.size {
                self.bits.fill(0);
            } else {
                for s in self.top + 1..seq {
                    let (w, b) = self.slot(s);
                    self.bits[w] &= !b;
                }
            }
            self.top = seq;
        }
        let (w, b) = self.slot(seq);
        self.bits[w] |= b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_each_number_once_inside_the_window() {
        let mut w = ReplayWindow::new(64);
        assert!(!w.check(0));
        for s in [1, 3, 2, 10, 5] {
            assert!(w.check(s), "{s}");
            w.accept(s);
            assert!(!w.check(s), "{s} replayed");
        }
        assert!(w.check(4));
        assert_eq!(w.top(), 10);
    }

    #[test]
    fn numbers_below_the_window_are_refused() {
        let mut w = ReplayWindow::new(64);
        w.accept(100);
        assert!(!w.check(36), "100 - 36 = 64 is outside");
        assert!(w.check(37));
        w.accept(37);
        // A jump beyond the window forgets every bit.
        w.accept(1000);
        assert!(w.check(999) && !w.check(1000) && !w.check(936));
    }

    #[test]
    fn bits_are_cleared_as_the_window_slides() {
        let mut w = ReplayWindow::new(32);
        for s in 1..=200 {
            assert!(w.check(s));
            w.accept(s);
        }
        for s in 169..=200 {
            assert!(!w.check(s));
        }
        // 64 bits of storage, so 201 shares a slot with 137 and 73: still new.
        assert!(w.check(201));
    }

    #[test]
    fn size_zero_turns_checking_off() {
        let mut w = ReplayWindow::new(0);
        w.accept(5);
        assert!(w.check(5) && w.check(0));
    }
}
