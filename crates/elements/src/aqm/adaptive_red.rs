//! AdaptiveRED — RED that sets its thresholds from a target length and adapts MAX_P
//!
//! Synopsis: `AdaptiveRED(TARGET, MAX_P [, keywords QUEUES, STABILITY])`
//!
//! Ports: 1 input, 1 or 2 outputs; input and output 0 agnostic, output 1 push.
//!
//! Adaptive RED (Floyd, Gummadi and Shenker, 2001) as Click implements it: RED (see `sluice
//! doc RED`, whose processing, random spacing of marks and output 1 it shares, always in the
//! gentle variant) with MIN_THRESH set to TARGET/2 and MAX_THRESH to TARGET + TARGET/2 (TARGET
//! is raised to 10 if smaller). Every half second MAX_P is adapted so that the average queue
//! length settles at TARGET, the middle of the ramp: with the average below the middle
//! (MIN_THRESH plus half the span, rounded down) and MAX_P above 0.01, MAX_P is multiplied by
//! 0.9 (multiplicative decrease); with the average above the middle (MAX_THRESH less that
//! half) and MAX_P below 0.5, it grows by 0.01 or by a quarter of itself, whichever is
//! smaller (additive increase). Probabilities are 16-bit fixed point, as in RED. With STABILITY 0 the
//! adaptation looks at the queues' current length instead of the average.
//!
//! Arguments:
//! - `TARGET` (unsigned): the target average queue length.
//! - `MAX_P` (real between 0 and 1): the initial marking probability at MAX_THRESH.
//! - `QUEUES`, `STABILITY`: as for RED.
//!
//! Handlers: as RED's: `min_thresh`, `max_thresh`, `max_p` (rw; reads show the values in
//! use, `max_p` as adapted; a write sets the value until the next adaptation), `avg_queue_size`,
//! `drops`, `queues`, `stats`, `config` (rw), `drop_details`.
//!
//! Example: `FromDevice(eth0) -> AdaptiveRED(40, 0.1) -> Queue(200) -> ToDevice(eth1)`

use sluice_core::{Cx, ElementClass, Timestamp};
use sluice_lang::args::Args;

use super::red::{Params, Prob, Red};

/// How often MAX_P adapts (Click's `ADAPTIVE_INTERVAL`, 500 ms).
const INTERVAL: Timestamp = Timestamp(500_000_000);
/// 0.01 in 16-bit fixed point: the floor of the decrease and the largest increase.
const ONE_HUNDREDTH: u32 = 655;
/// 0.9 in 16-bit fixed point: the decrease factor.
const NINE_TENTHS: u32 = 58982;
/// 0.5 in 16-bit fixed point: the ceiling of the increase.
const ONE_HALF: u32 = 0x8000;
/// The smallest target length.
const MIN_TARGET: u32 = 10;

impl Red {
    /// Reads AdaptiveRED's arguments (TARGET, MAX_P, QUEUES, STABILITY) as RED's parameters.
    pub(super) fn read_adaptive_params(args: &mut Args) -> Result<(Params, Option<String>), ()> {
        let target = args.read_mp::<u32>("TARGET")?.max(MIN_TARGET);
        let max_p = args.read_mp::<Prob>("MAX_P")?.0;
        let queues = args.read("QUEUES")?;
        let stability = args.read("STABILITY")?.unwrap_or(4);
        let min_thresh = target / 2;
        let p = Params {
            min_thresh,
            max_thresh: target.saturating_add(min_thresh),
            max_p,
            stability,
            gentle: true,
        };
        Ok((p, queues))
    }

    /// Schedules the first adaptation, half a second from now.
    pub(super) fn start_adapting(&mut self, cx: &mut Cx) {
        self.next_adapt = cx.now() + INTERVAL;
        cx.schedule_housekeeping(0, self.next_adapt);
    }

    /// Adapts MAX_P to the average queue length and schedules the next adaptation (Click's
    /// `AdaptiveRED::run_timer`).
    pub(super) fn adapt(&mut self, cx: &mut Cx) {
        let avg = if self.avg.stability_shift() == 0 {
            self.queue_size(cx)
        } else {
            self.avg.unscaled()
        };
        let half = u64::from((self.max_thresh - self.min_thresh) / 2);
        if avg < u64::from(self.min_thresh) + half && self.max_p > ONE_HUNDREDTH {
            self.max_p = ((u64::from(self.max_p) * u64::from(NINE_TENTHS)) >> 16) as u32;
        } else if avg > u64::from(self.max_thresh) - half && self.max_p < ONE_HALF {
            self.max_p += ONE_HUNDREDTH.min(self.max_p / 4);
        }
        self.set_slopes();
        self.next_adapt = self.next_adapt + INTERVAL;
        cx.schedule_housekeeping(0, self.next_adapt);
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "AdaptiveRED",
    source: include_str!("adaptive_red.rs"),
    make: || Box::new(Red::new(true)),
    ..super::red::CLASS
};
