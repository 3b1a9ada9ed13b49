//! Re-planning at run time (`sluice -j N --plan auto`): adaptive placement's policy becomes
//! the planner's model.
//!
//! The running configuration is calibrated as task groups before it starts
//! ([`crate::graph`]), and the router counts the packets its elements emit. Every time
//! adaptive placement looks (about every 100 million cycles; the first look, which holds the
//! start-up, is skipped), [`ModelReplanner`] measures each group's own cycles per source
//! packet over the window: the cycles its tasks spent over the source packets they
//! handled (the packets its task elements emitted, scaled by their calibrated share), minus
//! the synchronisation and contention the model gives the current placement. When one
//! group's cost has drifted from the plan's by more than [`DRIFT`] (costs under 5% of the
//! mean count as 5%), the new costs replace the plan's, every placement is searched again,
//! and the groups whose thread changes move through the engine's live hand-over if the new
//! placement is predicted at least [`GAIN`] faster. A drift is acted on once: the plan's
//! costs are then the measured ones.

use std::collections::BTreeSet;

use sluice_core::threads::{Look, Replanner, TaskGroup};

use crate::graph::{self, TaskGraph};
use crate::machine::Layout;

/// Relative change of a group's own cycles per source packet that triggers a re-plan.
pub const DRIFT: f64 = 0.25;

/// Predicted speed-up a re-plan must promise before groups move.
pub const GAIN: f64 = 0.10;

/// Costs below this fraction of the mean group's count as this much when drift is measured.
const SMALL: f64 = 0.05;

/// The planner's model as adaptive placement's policy.
pub struct ModelReplanner {
    graph: TaskGraph,
    layout: Layout,
    /// Unit of each engine group, once matched by task names.
    unit_of: Option<Vec<usize>>,
    /// Whether the first look (the start-up) has passed.
    started: bool,
    /// Set when the engine's groups do not match the calibrated ones.
    disabled: bool,
    /// Re-plans that moved groups.
    pub replans: usize,
}

impl ModelReplanner {
    /// A policy for the configuration calibrated as `graph`, on `layout`.
    pub fn new(graph: TaskGraph, layout: Layout) -> ModelReplanner {
        ModelReplanner {
            graph,
            layout,
            unit_of: None,
            started: false,
            disabled: false,
            replans: 0,
        }
    }

    /// Matches engine groups to calibrated units by their tasks' names.
    fn matching(&self, groups: &[TaskGroup], names: &[String]) -> Option<Vec<usize>> {
        let sets: Vec<BTreeSet<&str>> = self
            .graph
            .units
            .iter()
            .map(|u| u.tasks.iter().map(String::as_str).collect())
            .collect();
        let map: Vec<usize> = groups
            .iter()
            .map(|g| {
                let tasks: BTreeSet<&str> = g
                    .tasks
                    .iter()
                    .filter_map(|&t| names.get(t).map(String::as_str))
                    .collect();
                sets.iter().position(|s| *s == tasks)
            })
            .collect::<Option<_>>()?;
        let distinct: BTreeSet<usize> = map.iter().copied().collect();
        (distinct.len() == map.len() && map.len() == sets.len()).then_some(map)
    }

    /// One look: the moves `(unit, thread)` for the `cycles` each unit spent and the
    /// `packets` its task elements emitted since the last look, placed by `current`.
    pub fn replan(
        &mut self,
        cycles: &[f64],
        packets: &[f64],
        current: &[usize],
    ) -> Vec<(usize, usize)> {
        if !std::mem::replace(&mut self.started, true) {
            return Vec::new();
        }
        // Each unit's own cycles per source packet in this window, where it sent packets.
        let over = graph::unit_overhead(&self.graph, current, &self.layout);
        let own: Vec<Option<f64>> = self
            .graph
            .units
            .iter()
            .enumerate()
            .map(|(u, unit)| {
                (packets[u] > 0.0 && unit.packets > 0.0)
                    .then(|| (cycles[u] * unit.packets / packets[u] - over[u]).max(0.0))
            })
            .collect();
        let n = self.graph.units.len().max(1) as f64;
        let floor = SMALL * self.graph.units.iter().map(|u| u.cycles).sum::<f64>() / n;
        let drift = own
            .iter()
            .zip(&self.graph.units)
            .filter_map(|(o, u)| o.map(|o| (o - u.cycles).abs() / u.cycles.max(floor).max(1.0)))
            .fold(0.0, f64::max);
        if drift <= DRIFT {
            return Vec::new();
        }
        for (u, unit) in self.graph.units.iter_mut().enumerate() {
            if let Some(o) = own[u] {
                unit.cycles = o;
            }
            unit.written = current[u];
        }
        let now = graph::predict(&self.graph, current, &self.layout);
        let best = graph::search(&self.graph, &self.layout)
            .into_iter()
            .next()
            .unwrap_or_else(|| now.clone());
        let moves: Vec<(usize, usize)> = if best.rate > now.rate * (1.0 + GAIN) {
            (0..current.len())
                .filter(|&u| best.thread[u] != current[u])
                .map(|u| (u, best.thread[u]))
                .collect()
        } else {
            Vec::new()
        };
        tracing::info!(
            drift = format!("{:.0}%", drift * 100.0),
            now = format!("{:.3} Mpps", now.rate / 1e6),
            best = format!("{:.3} Mpps", best.rate / 1e6),
            placement = graph::describe(&best),
            moves = moves.len(),
            "re-planning: task group costs drifted"
        );
        if !moves.is_empty() {
            self.replans += 1;
        }
        moves
    }
}

impl Replanner for ModelReplanner {
    fn moves(&mut self, look: &Look) -> Vec<(usize, usize)> {
        if self.disabled {
            return Vec::new();
        }
        if self.unit_of.is_none() {
            self.unit_of = self.matching(look.groups, look.names);
            if self.unit_of.is_none() {
                self.disabled = true;
                tracing::warn!(
                    "re-planning off: the running task groups are not the calibrated ones"
                );
                return Vec::new();
            }
        }
        let Some(unit_of) = self.unit_of.clone() else {
            return Vec::new();
        };
        let n = self.graph.units.len();
        let (mut cycles, mut packets, mut thread) = (vec![0.0; n], vec![0.0; n], vec![0; n]);
        for (g, &u) in unit_of.iter().enumerate() {
            cycles[u] = look.cycles[g] as f64;
            packets[u] = look.packets[g] as f64;
            thread[u] = look.current[g];
        }
        self.replan(&cycles, &packets, &thread)
            .into_iter()
            .filter_map(|(u, t)| {
                let g = unit_of.iter().position(|&x| x == u)?;
                look.groups[g].movable.then_some((g, t))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Unit;

    fn layout() -> Layout {
        graph::two_cores(1e9, 0.0)
    }

    fn four_equal() -> TaskGraph {
        TaskGraph {
            units: (0..4)
                .map(|i| Unit {
                    tasks: vec![format!("s{}", i)],
                    measured: 100.0,
                    cycles: 100.0,
                    packets: 1.0,
                    footprints: Vec::new(),
                    movable: true,
                    written: i / 2,
                })
                .collect(),
            crossings: Vec::new(),
            packets: 1.0,
            seconds: 1.0,
        }
    }

    #[test]
    fn steady_costs_move_nothing() {
        // Cycles follow packets (a thread's time shared unevenly): the cost per packet holds.
        let mut r = ModelReplanner::new(four_equal(), layout());
        let at = [0, 0, 1, 1];
        for _ in 0..3 {
            let moves = r.replan(
                &[2000.0, 1010.0, 500.0, 1000.0],
                &[20.0, 10.0, 5.0, 10.0],
                &at,
            );
            assert!(moves.is_empty());
        }
        assert_eq!(r.replans, 0);
    }

    #[test]
    fn a_group_that_grows_gets_a_thread_of_its_own() {
        // s0 becomes 4x as expensive: {s0, s1} | {s2, s3} = 500 | 200; the best is
        // {s0} | {s1, s2, s3} = 400 | 300.
        let mut r = ModelReplanner::new(four_equal(), layout());
        let at = [0, 0, 1, 1];
        let ten = [10.0; 4];
        // The first look (start-up) is skipped whatever it shows.
        assert!(r
            .replan(&[4000.0, 1000.0, 1000.0, 1000.0], &ten, &at)
            .is_empty());
        let moves = r.replan(&[4000.0, 1000.0, 1000.0, 1000.0], &ten, &at);
        let mut after = at.to_vec();
        for &(u, t) in &moves {
            after[u] = t;
        }
        assert_eq!(
            after.iter().filter(|&&t| t == after[0]).count(),
            1,
            "{:?}",
            after
        );
        assert_eq!(r.replans, 1);
        // The measured costs are now the plan's: the same costs move nothing more.
        assert!(r
            .replan(&[4000.0, 1000.0, 1000.0, 1000.0], &ten, &after)
            .is_empty());
        // A group that sent nothing (finished) keeps its cost.
        assert!(r
            .replan(
                &[0.0, 1000.0, 1000.0, 1000.0],
                &[0.0, 10.0, 10.0, 10.0],
                &after
            )
            .is_empty());
    }

    #[test]
    fn engine_groups_are_matched_by_task_names() {
        let r = ModelReplanner::new(four_equal(), layout());
        let names: Vec<String> = ["s2", "s0", "s1", "s3"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let groups: Vec<TaskGroup> = (0..4)
            .map(|t| TaskGroup {
                tasks: vec![t],
                movable: true,
                ..Default::default()
            })
            .collect();
        assert_eq!(r.matching(&groups, &names), Some(vec![2, 0, 1, 3]));
        let joined = vec![
            TaskGroup {
                tasks: vec![0, 1],
                ..Default::default()
            },
            TaskGroup {
                tasks: vec![2, 3],
                ..Default::default()
            },
        ];
        assert_eq!(r.matching(&joined, &names), None);
    }
}
