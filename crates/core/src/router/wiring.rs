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
        let n = self.info.len();
        self.outs = (0..n)
            .map(|e| {
                let inf = &self.info[e];
                (0..inf.noutputs)
                    .map(|p| {
                        let first = inf.out_peers[p].first().copied();
                        first
                            .filter(|_| inf.out_push[p])
                            .map(|to| self.follow_push(to))
                    })
                    .collect()
            })
            .collect();
        self.ins = (0..n)
            .map(|e| {
                let inf = &self.info[e];
                (0..inf.ninputs)
                    .map(|p| {
                        let first = inf.in_peers[p].first().copied();
                        first
                            .filter(|_| !inf.in_push[p])
                            .map(|from| self.follow_pull(from))
                    })
                    .collect()
            })
            .collect();
    }

    /// The input that really receives packets pushed into `to`. A loop of pass-through
    /// elements stops at the element where it closes, which is then called.
    fn follow_push(&self, mut to: PortRef) -> PortRef {
        for _ in 0..=self.pass.len() {
            let next = self
                .pass
                .get(&to.elem)
                .and_then(|p| p.push.get(to.port).copied().flatten())
                .and_then(|o| self.info[to.elem].out_peers.get(o)?.first().copied());
            match next {
                Some(n) => to = n,
                None => break,
            }
        }
        to
    }

    /// The output that really gives packets pulled from `from`.
    fn follow_pull(&self, mut from: PortRef) -> PortRef {
        for _ in 0..=self.pass.len() {
            let next = self
                .pass
                .get(&from.elem)
                .and_then(|p| p.pull.get(from.port).copied().flatten())
                .and_then(|i| self.info[from.elem].in_peers.get(i)?.first().copied());
            match next {
                Some(n) => from = n,
                None => break,
            }
        }
        from
    }
}
