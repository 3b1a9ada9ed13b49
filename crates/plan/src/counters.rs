//! Hardware counters for calibration runs, where `perf_event_open` offers them.
//!
//! A [`Counters`] opened on a thread counts its events there and in the threads it creates
//! afterwards (the counters are inherited), from opening to reading, in user space only.
//! Each event is opened on its own; one the kernel refuses (a virtual machine without a
//! virtual PMU, `perf_event_paranoid` too strict, no such event on this processor) is left
//! out and the reason kept. The calibration reads last-level cache references and misses per
//! packet with them ([`crate::profile`]); without them it works from time alone.

use std::io;

/// An event to count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Last-level cache references (the accesses that missed every private cache).
    LlcReferences,
    /// Last-level cache misses.
    LlcMisses,
    /// CPU time of the counted threads in nanoseconds (a software event: offered wherever
    /// `perf_event_open` is).
    TaskClock,
}

impl Event {
    /// `(type, config)` of `perf_event_attr`.
    fn kind(self) -> (u32, u64) {
        const HARDWARE: u32 = 0;
        const SOFTWARE: u32 = 1;
        match self {
            Event::LlcReferences => (HARDWARE, 2),
            Event::LlcMisses => (HARDWARE, 3),
            Event::TaskClock => (SOFTWARE, 1),
        }
    }
}

/// The kernel's `perf_event_attr` up to `config2` (its second published size, 72 bytes): the
/// kernel accepts every published size and takes the fields beyond as zero.
#[repr(C)]
#[derive(Default)]
struct Attr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
}

/// `perf_event_attr` flag bits.
const INHERIT: u64 = 1 << 1;
const EXCLUDE_KERNEL: u64 = 1 << 5;
const EXCLUDE_HV: u64 = 1 << 6;
/// `perf_event_open` flag: the descriptor closes on exec.
const FD_CLOEXEC: libc::c_ulong = 8;

/// Counters open on the calling thread.
pub struct Counters {
    open: Vec<(Event, std::fs::File)>,
    refused: Vec<(Event, String)>,
}

impl Counters {
    /// Opens `events` on the calling thread and the threads it will create.
    pub fn open(events: &[Event]) -> Counters {
        let mut c = Counters {
            open: Vec::new(),
            refused: Vec::new(),
        };
        for &e in events {
            match open_one(e) {
                Ok(f) => c.open.push((e, f)),
                Err(why) => c.refused.push((e, why.to_string())),
            }
        }
        c
    }

    /// The count of `e` so far, `None` if it is not open or cannot be read.
    pub fn read(&self, e: Event) -> Option<u64> {
        use std::io::Read;
        let (_, f) = self.open.iter().find(|(x, _)| *x == e)?;
        let mut buf = [0u8; 8];
        (&mut &*f).read_exact(&mut buf).ok()?;
        Some(u64::from_ne_bytes(buf))
    }

    /// True if every event asked for is open.
    pub fn all_open(&self) -> bool {
        self.refused.is_empty()
    }

    /// Why the first refused event was refused, if one was.
    pub fn refusal(&self) -> Option<String> {
        self.refused
            .first()
            .map(|(e, why)| format!("{:?}: {}", e, why))
    }
}

fn open_one(e: Event) -> io::Result<std::fs::File> {
    use std::os::fd::FromRawFd;
    let (kind, config) = e.kind();
    let attr = Attr {
        kind,
        size: std::mem::size_of::<Attr>() as u32,
        config,
        flags: INHERIT | EXCLUDE_KERNEL | EXCLUDE_HV,
        ..Attr::default()
    };
    // SAFETY: `attr` is a valid `perf_event_attr` of the size it declares, alive for the
    // call; pid 0 and cpu -1 count the calling thread on any CPU, group -1 opens no group.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const Attr,
            0 as libc::pid_t,
            -1 as libc::c_int,
            -1 as libc::c_int,
            FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel returned a new descriptor that nothing else owns.
    Ok(unsafe { std::fs::File::from_raw_fd(fd as i32) })
}

/// Last-level cache references and misses of a run, per packet.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CacheCounts {
    /// References per packet.
    pub references: f64,
    /// Misses per packet.
    pub misses: f64,
}

impl CacheCounts {
    /// What `self` has beyond `base` (a run of the same source and sink alone), never below 0.
    pub fn beyond(&self, base: &CacheCounts) -> CacheCounts {
        CacheCounts {
            references: (self.references - base.references).max(0.0),
            misses: (self.misses - base.misses).max(0.0),
        }
    }
}

/// Below this many last-level references per packet an element has no footprint beyond its
/// private caches.
pub const NEGLIGIBLE: f64 = 0.02;

/// `S` and `N` of an element from its last-level counts alone (`c`), on a machine whose
/// private cache holds `private` bytes and whose last level `last`: each of its `N`
/// accesses per packet misses the private cache with probability `1 − private/S` (the
/// references) and the last level with `1 − last/S` (the misses), so their ratio gives `S`
/// and the references then give `N`. Without misses `S` lies between the two capacities and
/// is taken as their geometric mean. `None` when the references are negligible.
pub fn footprint(c: &CacheCounts, private: f64, last: f64) -> Option<(f64, f64)> {
    if c.references < NEGLIGIBLE || private <= 0.0 || last <= private {
        return None;
    }
    let ratio = (c.misses / c.references).min(0.99);
    let bytes = if c.misses < NEGLIGIBLE {
        (private * last).sqrt()
    } else {
        ((last - ratio * private) / (1.0 - ratio)).max(last)
    };
    let accesses = c.references / crate::model::miss_probability(private, bytes);
    Some((bytes, accesses))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_attr_has_a_published_size() {
        assert_eq!(std::mem::size_of::<Attr>(), 72);
    }

    #[test]
    fn counts_or_says_why_not() {
        let c = Counters::open(&[Event::TaskClock, Event::LlcMisses]);
        match c.read(Event::TaskClock) {
            // Offered: a thread created now is counted too. It spins for 20 ms of its own
            // CPU time, however long other threads keep it waiting.
            Some(before) => {
                std::thread::spawn(|| {
                    let cpu = || {
                        let mut t = libc::timespec {
                            tv_sec: 0,
                            tv_nsec: 0,
                        };
                        // SAFETY: `t` is a valid timespec for the call to fill.
                        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
                        t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
                    };
                    let start = cpu();
                    while cpu() < start + 20_000_000 {
                        std::hint::spin_loop();
                    }
                })
                .join()
                .unwrap();
                let after = c.read(Event::TaskClock).unwrap();
                assert!(after >= before + 10_000_000, "{before} {after}");
            }
            None => assert!(c.refusal().is_some()),
        }
        assert_eq!(c.all_open(), c.refusal().is_none());
        assert_eq!(c.read(Event::LlcReferences), None);
    }

    #[test]
    fn footprints_from_counts() {
        let (l2, l3) = (1e6, 16e6);
        // A 64 MB structure read 10 times a packet: 9.84 references, 7.5 misses.
        let pi = |cap: f64| crate::model::miss_probability(cap, 64e6);
        let c = CacheCounts {
            references: 10.0 * pi(l2),
            misses: 10.0 * pi(l3),
        };
        let (s, n) = footprint(&c, l2, l3).unwrap();
        assert!((s - 64e6).abs() < 1.0, "{s}");
        assert!((n - 10.0).abs() < 1e-9, "{n}");
        // No misses: between the capacities.
        let (s, n) = footprint(
            &CacheCounts {
                references: 2.0,
                misses: 0.0,
            },
            l2,
            l3,
        )
        .unwrap();
        assert_eq!(s, 4e6);
        assert!((n - 2.0 / 0.75).abs() < 1e-9);
        assert_eq!(footprint(&CacheCounts::default(), l2, l3), None);
        let run = CacheCounts {
            references: 3.0,
            misses: 1.0,
        };
        let base = CacheCounts {
            references: 1.0,
            misses: 2.0,
        };
        assert_eq!(
            run.beyond(&base),
            CacheCounts {
                references: 2.0,
                misses: 0.0
            }
        );
    }
}
