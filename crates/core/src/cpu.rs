//! Processor facts the engine uses: the cycle counter and CPU affinity.

/// Reads the processor's cycle counter: a cheap monotonic count for measuring task and
/// element costs (0 on processors without one).
#[inline]
pub fn cycles() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC has no memory effects and is available on every x86-64 processor.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// Asks the processor to bring the cache line holding `p` into its caches; reads nothing
/// and never faults, whatever the address.
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it never faults and changes no program state.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The set of CPUs a thread may run on.
#[derive(Clone, Copy)]
pub struct Affinity(libc::cpu_set_t);

impl Affinity {
    /// The calling thread's current set, if the system tells.
    pub fn current() -> Option<Affinity> {
        // SAFETY: cpu_set_t is plain data; sched_getaffinity writes at most its size.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            (libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0)
                .then_some(Affinity(set))
        }
    }

    /// The CPUs in the set, in order.
    pub fn cpus(&self) -> Vec<usize> {
        // SAFETY: CPU_ISSET only reads the set.
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &self.0) })
            .collect()
    }

    /// Pins the calling thread to the `n`-th CPU of this set (modulo its size).
    pub fn pin(&self, n: usize) {
        let cpus = self.cpus();
        if cpus.is_empty() {
            return;
        }
        // SAFETY: builds a one-CPU set on the stack and hands its size and address to the
        // kernel; a failure leaves the affinity unchanged.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpus[n % cpus.len()], &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
    }

    /// Gives the calling thread this whole set again.
    pub fn restore(&self) {
        // SAFETY: passes a valid set and its size; a failure leaves the affinity unchanged.
        unsafe {
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.0);
        }
    }
}
