//! Time: nanosecond timestamps and the router clock (real or simulated).

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
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

/// The router's clock: the wall clock, possibly warped (Click's `timewarp`), or a simulated
/// clock that jumps to the next timer when nothing is runnable. Clones share one clock: the
/// routers of all threads see the same time.
#[derive(Clone, Debug)]
pub struct Clock {
    state: Arc<ClockState>,
}

#[derive(Debug)]
struct ClockState {
    /// Simulated time, for a simulated clock.
    sim: Option<Sim>,
    /// True once a time warp is set (until then the wall clock is read as it is).
    warped: AtomicBool,
    warp: Mutex<Warp>,
}

/// Simulated time in nanoseconds, and the next timer of each thread that shares the clock
/// (`i64::MAX`: none), so that no thread jumps past another one's timer.
#[derive(Debug)]
struct Sim {
    now: AtomicI64,
    next: Box<[AtomicI64]>,
}

/// A time warp: from `base_raw` on, wall-clock time passes `speed` times as fast, starting
/// from `base_warped`; with `nowait` the clock also jumps to the next timer when idle.
#[derive(Clone, Copy, Debug)]
struct Warp {
    speed: f64,
    base_raw: i64,
    base_warped: i64,
    nowait: bool,
}

impl Warp {
    fn at(&self, raw: Timestamp) -> Timestamp {
        Timestamp(self.base_warped + ((raw.0 - self.base_raw) as f64 * self.speed) as i64)
    }
}

impl Clock {
    fn with_sim(sim: Option<Sim>) -> Clock {
        Clock {
            state: Arc::new(ClockState {
                sim,
                warped: AtomicBool::new(false),
                warp: Mutex::new(Warp {
                    speed: 1.0,
                    base_raw: 0,
                    base_warped: 0,
                    nowait: false,
                }),
            }),
        }
    }

    /// A wall clock.
    pub fn real() -> Clock {
        Clock::with_sim(None)
    }

    /// A simulated clock starting at [`Timestamp::SIM_START`].
    pub fn simulated() -> Clock {
        Clock::with_sim(Some(Sim {
            now: AtomicI64::new(Timestamp::SIM_START.0),
            next: (0..crate::threads::MAX_THREADS)
                .map(|_| AtomicI64::new(i64::MAX))
                .collect(),
        }))
    }

    /// True for a simulated clock.
    pub fn is_simulated(&self) -> bool {
        self.state.sim.is_some()
    }

    fn warp(&self) -> Warp {
        *self.state.warp.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The current time.
    #[inline]
    pub fn now(&self) -> Timestamp {
        match &self.state.sim {
            Some(sim) => Timestamp(sim.now.load(Ordering::Acquire)),
            None if !self.state.warped.load(Ordering::Relaxed) => Timestamp::now_real(),
            None => self.warp().at(Timestamp::now_real()),
        }
    }

    /// True if the clock jumps to the next timer when nothing else can run: simulated, or
    /// warped with `nowait`.
    pub fn jumps(&self) -> bool {
        self.is_simulated() || (self.state.warped.load(Ordering::Relaxed) && self.warp().nowait)
    }

    /// Records `next`, the next timer of thread `thread`, for a simulated clock shared by
    /// several threads.
    pub fn note_next_timer(&self, thread: usize, next: Option<Timestamp>) {
        if let Some(slot) = self.state.sim.as_ref().and_then(|s| s.next.get(thread)) {
            slot.store(next.map_or(i64::MAX, |t| t.0), Ordering::Release);
        }
    }

    /// Thread `thread` has nothing to do until its next timer `t`: a jumping clock moves on
    /// to it, a simulated one no further than the earliest next timer any thread noted (so
    /// that every thread's timers run in time order).
    pub fn jump(&self, thread: usize, t: Timestamp) {
        let Some(sim) = &self.state.sim else {
            return self.advance_to(t);
        };
        self.note_next_timer(thread, Some(t));
        let earliest = sim
            .next
            .iter()
            .map(|n| n.load(Ordering::Acquire))
            .min()
            .unwrap_or(i64::MAX);
        self.advance_to(Timestamp(t.0.min(earliest)));
    }

    /// Moves a jumping clock on to `t` (never backwards); no effect on another clock.
    pub fn advance_to(&self, t: Timestamp) {
        if let Some(sim) = &self.state.sim {
            sim.now.fetch_max(t.0, Ordering::AcqRel);
        } else if self.state.warped.load(Ordering::Relaxed) {
            let mut w = self.state.warp.lock().unwrap_or_else(|e| e.into_inner());
            let raw = Timestamp::now_real();
            if w.nowait && w.at(raw) < t {
                (w.base_raw, w.base_warped) = (raw.0, t.0);
            }
        }
    }

    /// The wall-clock time until this clock reaches `t` (zero if it has).
    pub fn real_wait(&self, t: Timestamp) -> Duration {
        let ahead = (t - self.now()).0.max(0) as f64;
        let speed = if self.state.warped.load(Ordering::Relaxed) {
            self.warp().speed
        } else {
            1.0
        };
        Duration::from_nanos((ahead / speed) as u64)
    }

    /// Click's `timewarp` handler value: `simulation`, `nowait`, or the warp speed.
    pub fn warp_desc(&self) -> String {
        if self.is_simulated() {
            return "simulation".into();
        }
        let w = self.warp();
        if w.nowait {
            "nowait".into()
        } else {
            w.speed.to_string()
        }
    }

    /// Sets the time warp from a `timewarp` write: `nowait` (jump to the next timer when
    /// idle) or a speed factor (time passes that many times as fast from now on). The time
    /// goes on from where it is. A simulated clock cannot be warped.
    pub fn set_warp(&self, value: &str) -> Result<(), String> {
        if self.is_simulated() {
            return Err("a simulated clock cannot be warped".into());
        }
        let value = value.trim();
        let mut w = self.state.warp.lock().unwrap_or_else(|e| e.into_inner());
        let raw = Timestamp::now_real();
        let now = if self.state.warped.load(Ordering::Relaxed) {
            w.at(raw)
        } else {
            raw
        };
        if value == "nowait" {
            w.nowait = true;
        } else {
            let speed: f64 = value.parse().map_err(|_| "expected double".to_string())?;
            if !(speed > 0.0 && speed.is_finite()) {
                return Err("timefactor must be > 0".into());
            }
            w.speed = speed;
            w.nowait = false;
        }
        (w.base_raw, w.base_warped) = (raw.0, now.0);
        self.state.warped.store(true, Ordering::Relaxed);
        Ok(())
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
    fn warp_speeds_the_clock_up_and_shortens_waits() {
        let c = Clock::real();
        assert_eq!(c.warp_desc(), "1");
        assert_eq!(c.set_warp("0").unwrap_err(), "timefactor must be > 0");
        assert_eq!(c.set_warp("fast").unwrap_err(), "expected double");
        c.set_warp("4").unwrap();
        assert_eq!(c.warp_desc(), "4");
        let (t0, r0) = (c.now(), Timestamp::now_real());
        std::thread::sleep(Duration::from_millis(20));
        let (warped, real) = ((c.now() - t0).0, (Timestamp::now_real() - r0).0);
        assert!(
            warped >= 3 * real && warped <= 5 * real,
            "{warped} vs {real}"
        );
        let wait = c.real_wait(c.now() + Timestamp::from_secs_f64(1.0));
        assert!(wait <= Duration::from_millis(250), "{wait:?}");
        // Back to normal speed: the time goes on from where it is, not back.
        let before = c.now();
        c.set_warp("1").unwrap();
        assert!(c.now() >= before);
    }

    #[test]
    fn nowait_jumps_to_the_next_timer() {
        let c = Clock::real();
        assert!(!c.jumps());
        c.set_warp("nowait").unwrap();
        assert!(c.jumps());
        assert_eq!(c.warp_desc(), "nowait");
        let target = c.now() + Timestamp::from_secs_f64(100.0);
        c.jump(0, target);
        assert!(c.now() >= target);
        assert!(Clock::simulated().set_warp("2").is_err());
        assert_eq!(Clock::simulated().warp_desc(), "simulation");
    }

    #[test]
    fn shared_sim_clock_waits_for_the_earliest_timer_of_any_thread() {
        let c = Clock::simulated();
        let other = c.clone();
        let at = |s: f64| Timestamp::SIM_START + Timestamp::from_secs_f64(s);
        other.note_next_timer(1, Some(at(1.0)));
        c.jump(0, at(5.0));
        assert_eq!(c.now(), at(1.0));
        other.note_next_timer(1, None);
        c.jump(0, at(5.0));
        assert_eq!(other.now(), at(5.0));
    }

    #[test]
    fn sim_clock_only_moves_forward() {
        let c = Clock::simulated();
        c.advance_to(Timestamp::SIM_START + Timestamp(10));
        c.advance_to(Timestamp::SIM_START);
        assert_eq!(c.now(), Timestamp::SIM_START + Timestamp(10));
    }
}
