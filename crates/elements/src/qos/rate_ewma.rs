//! Click's rate estimator (`RateEWMA`) and its fixed-point printing, shared by the meters.
//! (Not an element.)
//!
//! Time is cut into epochs of one millisecond of the router clock (Click's jiffies at user
//! level). Samples are summed over the current epoch; when a later epoch begins, the sum is
//! folded into a moving average with weight 1/16, and each epoch that passed without samples
//! folds in a zero (after 100 or more such epochs the average simply restarts at zero). The
//! average is kept with 10 bits of fraction, in samples per epoch, with Click's rounding
//! compensation, and wraps as Click's 32-bit arithmetic does.

use sluice_core::Timestamp;

/// Bits of fraction in the scaled average.
pub(crate) const SCALE: u32 = 10;
/// Epochs per second.
pub(crate) const EPOCHS_PER_SEC: u32 = 1000;
/// The weight of a new sample is 2^-STABILITY.
const STABILITY: u32 = 4;
/// Added to every scaled sample so that the average rounds rather than truncates.
const COMPENSATION: u32 = 1 << (STABILITY - 1);
/// Idle epochs after which the average is reset instead of decayed one by one.
const RESET_AFTER: u64 = 100;

/// A moving average of samples per epoch.
#[derive(Clone, Debug)]
pub(crate) struct RateEwma {
    /// The epoch being summed.
    epoch: u64,
    /// Samples in that epoch so far.
    current: u32,
    /// The scaled average over past epochs.
    avg: u32,
}

/// The epoch holding time `t`.
fn epoch_of(t: Timestamp) -> u64 {
    u64::try_from(t.0).unwrap_or(0) / (1_000_000_000 / EPOCHS_PER_SEC as u64)
}

impl RateEwma {
    /// An average of zero whose first epoch holds `now`.
    pub(crate) fn new(now: Timestamp) -> RateEwma {
        RateEwma {
            epoch: epoch_of(now),
            current: 0,
            avg: 0,
        }
    }

    /// Moves the estimator to the epoch holding `now` (folding what earlier epochs summed),
    /// then adds `delta` samples to it.
    pub(crate) fn update(&mut self, now: Timestamp, delta: u32) {
        let now = epoch_of(now);
        if now != self.epoch {
            self.fold(self.current);
            let idle = now.wrapping_sub(self.epoch).wrapping_sub(1);
            if idle >= RESET_AFTER {
                self.avg = 0;
            } else {
                for _ in 0..idle {
                    self.fold(0);
                }
            }
            self.current = 0;
            self.epoch = now;
        }
        self.current = self.current.wrapping_add(delta);
    }

    /// Folds one epoch's sum `x` into the average.
    fn fold(&mut self, x: u32) {
        let x = (x << SCALE).wrapping_add(COMPENSATION);
        let step = (x.wrapping_sub(self.avg) as i32) >> STABILITY;
        self.avg = self.avg.wrapping_add(step as u32);
    }

    /// The scaled average: samples per epoch with [`SCALE`] bits of fraction.
    pub(crate) fn scaled(&self) -> u32 {
        self.avg
    }

    /// The average in samples per second, as Click prints it.
    pub(crate) fn unparse(&self) -> String {
        unparse_fixed(self.avg as u64 * EPOCHS_PER_SEC as u64, SCALE)
    }
}

/// Prints `v`, a number with `frac` bits of fraction, in decimal with the fewest fraction
/// digits that read back as the same number (Knuth's `print_scaled`, generalised as Click's
/// `cp_unparse_real2` does, including its rounding).
pub(crate) fn unparse_fixed(v: u64, frac: u32) -> String {
    let one = 1u32 << frac;
    let mut s = (v >> frac).to_string();
    let f = (v & (one as u64 - 1)) as u32;
    if f == 0 {
        return s;
    }
    s.push('.');
    let mut rounder = 5u32;
    while rounder < one >> 1 {
        rounder *= 10;
    }
    let mut rest = f.wrapping_mul(10).wrapping_add(5);
    let mut slack = 10u32;
    loop {
        if slack > one {
            rest = rest.wrapping_add(one >> 1).wrapping_sub(rounder);
        }
        s.push(char::from(b'0' + (rest >> frac) as u8));
        rest = (rest & (one - 1)).wrapping_mul(10);
        slack = slack.wrapping_mul(10);
        if rest <= slack {
            return s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    #[test]
    fn folds_each_epoch_with_weight_one_sixteenth() {
        let mut r = RateEwma::new(Timestamp(0));
        r.update(Timestamp(0), 3);
        assert_eq!(r.scaled(), 0, "the first epoch is not folded yet");
        r.update(Timestamp(MS), 0);
        assert_eq!(r.scaled(), (3 * 1024 + 8) >> 4);
        // Epoch 1 summed nothing and epochs 2 and 3 were idle: three zeros decay the average
        // towards the compensation value.
        r.update(Timestamp(4 * MS), 0);
        let mut want = (3 * 1024 + 8) >> 4;
        for _ in 0..3 {
            want += (8 - want) >> 4;
        }
        assert_eq!(r.scaled(), want as u32);
    }

    #[test]
    fn long_idle_restarts_at_zero_and_steady_rate_converges() {
        let mut r = RateEwma::new(Timestamp(0));
        for ms in 0..400 {
            r.update(Timestamp(ms * MS), 2);
        }
        r.update(Timestamp(400 * MS), 0);
        // From below, the average stops where a step of less than one sixteenth rounds to 0.
        assert_eq!(r.scaled(), 2 * 1024 + 8 - 15);
        r.update(Timestamp(501 * MS), 0);
        assert_eq!(r.scaled(), 0);
    }

    #[test]
    fn prints_like_click() {
        assert_eq!(unparse_fixed(0, 10), "0");
        assert_eq!(unparse_fixed(5 << 10, 10), "5");
        assert_eq!(unparse_fixed(512, 10), "0.5");
        assert_eq!(unparse_fixed(256, 10), "0.25");
        assert_eq!(unparse_fixed(8000, 10), "7.8125");
        assert_eq!(unparse_fixed(1, 10), "0.001");
        assert_eq!(unparse_fixed((1 << 40) + 768, 10), "1073741824.75");
    }
}
