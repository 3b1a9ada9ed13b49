//! Which element each port calls: the connection tables the data path reads, and elements
//! that take themselves out of them (Click's Bypass, which wires its callers straight to its
//! peers).

use super::{PortRef, Router};

/// How packets pass straight through an element: its callers are wired to the peers it
/// forwards to, and the element itself is no longer called on those ports. Chains of such
/// elements are followed to the first element that processes packets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PassThrough {
    /// For each push input, the output its packets leave on (`None`: the element is called).
    pub push: Vec<Option<usize>>,
    /// For each pull output, the input it pulls from (`None`: the element is called).
    pub pull: Vec<Option<usize>>,
}

impl Router {
    /// Lets element `e` pass packets straight through (or, with `None`, be called again), and
    /// rewires the ports that reach it. The change applies to the connection tables of the
    /// calling thread, the thread that runs `e` and its callers.
    pub(crate) fn set_pass_through(&mut self, e: usize, pass: Option<PassThrough>) {
        match pass {
            Some(p) => self.pass.insert(e, p),
            None => self.pass.remove(&e),
        };
        self.rewire();
    }

    /// Builds the tables from the connections: each push output calls the element its
    /// connection reaches, each pull input pulls from its peer, both followed through
    /// elements that pass packets straight through.
    pub(crate) fn rewire(&mut self) {
        self.outs = self.table(true);
        self.ins = self.table(false);
    }

    /// The push-output table (`push`) or the pull-input table.
    fn table(&self, push: bool) -> Vec<Box<[Option<PortRef>]>> {
        self.graph
            .info
            .iter()
            .map(|inf| {
                let (peers, is_push) = if push {
                    (&inf.out_peers, &inf.out_push)
                } else {
                    (&inf.in_peers, &inf.in_push)
                };
                peers
                    .iter()
                    .zip(is_push)
                    .map(|(ps, &p)| ps.first().copied().filter(|_| p == push))
                    .map(|first| first.map(|at| self.follow(at, push)))
                    .collect()
            })
            .collect()
    }

    /// The port that really takes packets pushed into `at` (`push`), or really gives packets
    /// pulled from output `at`, past elements that pass packets straight through. A loop of
    /// such elements stops at the element where it closes, which is then called.
    fn follow(&self, mut at: PortRef, push: bool) -> PortRef {
        for _ in 0..=self.pass.len() {
            let next = self.pass.get(&at.elem).and_then(|p| {
                let (map, peers) = if push {
                    (&p.push, &self.graph.info[at.elem].out_peers)
                } else {
                    (&p.pull, &self.graph.info[at.elem].in_peers)
                };
                let port = map.get(at.port).copied().flatten()?;
                peers.get(port)?.first().copied()
            });
            match next {
                Some(n) => at = n,
                None => break,
            }
        }
        at
    }
}
