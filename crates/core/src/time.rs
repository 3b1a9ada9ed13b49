//! Time: nanosecond timestamps and the router clock (real or simulated).

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A point in time as nanoseconds since the Unix epoch (also used for durations).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// The epoch.
    pub const ZERO: Timestamp = Timestamp(0);
    /// Start of simulated time (`--simtime`): 2000-01-01 00:00:00 UTC.
    pub const SIM_START: Timestamp = Timestamp(946_684_800_000_000_000);

    /// Builds a timestamp from seconds and nanoseconds.
    pub fn from_parts(sec: i64, nsec: i64) -> Timestamp {
        Timestamp(sec * 1_000_000_000 + nsec)
    }

    /// Builds a timestamp from fractional seconds.
    pub fn from_secs_f64(s: f64) -> Timestamp {
        Timestamp((s * 1e9).round() as i64)
    }

    /// Whole seconds.
    pub fn sec(self) -> i64 {
        self.0.div_euclid(1_000_000_000)
    }

    /// Nanoseconds within the second.
    pub fn subsec_nanos(self) -> i64 {
        self.0.rem_euclid(1_000_000_000)
    }

    /// As fractional seconds.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }

    /// The current wall-clock time.
    pub fn now_real() -> Timestamp {
        let d = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or(Duration::ZERO);
        Timestamp(d.as_nanos() as i64)
    }
}

impl std::ops::Add for Timestamp {
    type Output = Timestamp;
    fn add(self, o: Timestamp) -> Timestamp {
        Timestamp(self.0.saturating_add(o.0))
    }
}

impl std::ops::Sub for Timestamp {
    type Output = Timestamp;
    fn sub(self, o: Timestamp) -> Timestamp {
        Timestamp(self.0.saturating_sub(o.0))
    }
}

impl fmt::Display for Timestamp {
    /// Click's format: seconds with six decimal places when the time is a whole number of
    /// microseconds (`1000000000.500000`), nine otherwise (`1000000000.000000001`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let a = self.0.unsigned_abs();
        let (sec, ns) = (a / 1_000_000_000, a % 1_000_000_000);
        if ns % 1000 == 0 {
            write!(f, "{}{}.{:06}", sign, sec, ns / 1000)
        } else {
            write!(f, "{}{}.{:09}", sign, sec, ns)
        }
    }
}

/// The router's clock: the wall clock, or a simulated clock that jumps to the next timer when
/// nothing is runnable.
#[derive(Debug)]
pub struct Clock {
    sim: Option<Timestamp>,
}

impl Clock {
    /// A wall clock.
    pub fn real() -> Clock {
        Clock { sim: None }
    }

    /// A simulated clock starting at [`Timestamp::SIM_START`].
    pub fn simulated() -> Clock {
        Clock {
            sim: Some(Timestamp::SIM_START),
        }
    }

    /// True for a simulated clock.
    pub fn is_simulated(&self) -> bool {
        self.sim.is_some()
    }

    /// The current time.
    #[inline]
    pub fn now(&self) -> Timestamp {
        match self.sim {
            Some(t) => t,
            None => Timestamp::now_real(),
        }
    }

    /// Advances a simulated clock to `t` (never backwards); no effect on a wall clock.
    pub fn advance_to(&mut self, t: Timestamp) {
        if let Some(s) = &mut self.sim {
            if t > *s {
                *s = t;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display() {
        assert_eq!(Timestamp::from_parts(1, 5).to_string(), "1.000000005");
        assert_eq!(Timestamp(-1_500_000_000).to_string(), "-1.500000");
        assert_eq!(Timestamp::from_parts(2, 3_000).to_string(), "2.000003");
    }

    #[test]
    fn sim_clock_only_moves_forward() {
        let mut c = Clock::simulated();
        c.advance_to(Timestamp::SIM_START + Timestamp(10));
        c.advance_to(Timestamp::SIM_START);
        assert_eq!(c.now(), Timestamp::SIM_START + Timestamp(10));
    }
}
