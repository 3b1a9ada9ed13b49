//! The push path and handlers shared by Classifier, IPClassifier and IPFilter.

use sluice_core::toolkit::{push_by_port, NO_PORT};
use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Packet, BATCH_MAX};
use sluice_lang::args::Args;

use super::program::{Expr, Program};

/// The MAC header bytes a program sees: two leading bytes, then the 14-byte Ethernet header
/// (where [`super::program::Base::Mac`] offsets count from).
const MAC_WINDOW: usize = 16;

drop_reasons! {
    /// Why a classifier drops a packet.
    pub enum Reason {
        /// No pattern led the packet to an output (IPFilter: a `drop` rule, or no rule).
        NoMatch => "no matching pattern",
    }
}

/// Compiles one pattern per output (pattern i → output i), each parsed by `parse`, into a
/// program reading from `start` (an IP program from the network header).
pub fn compile_patterns(
    patterns: &[String],
    parse: fn(&str) -> Result<Expr, String>,
    start: Start,
) -> Result<Program, String> {
    let mut rules = Vec::with_capacity(patterns.len());
    for (i, p) in patterns.iter().enumerate() {
        rules.push((parse(p)?, Some(i as u32)));
    }
    Ok(match start {
        Start::Data => Program::compile(&rules),
        Start::Network => Program::compile_ip(&rules),
    })
}

/// Where a compiled program reads from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// The packet data start (Classifier).
    Data,
    /// The network header annotation, or the data start when none is set (IPClassifier,
    /// IPFilter): IPv4 and IPv6 headers, told apart by their version.
    Network,
}

/// A classifying element: one compiled program, one batch per output.
pub struct ClassifyElem {
    pub(crate) prog: Program,
    start: Start,
    outs: Vec<Batch>,
    /// Outputs the program classifies to.
    noutputs: usize,
    /// Packets dropped, by reason.
    pub(crate) drops: Drops<Reason>,
}

impl ClassifyElem {
    /// An element running `prog` on packets from `start`.
    pub fn new(start: Start) -> ClassifyElem {
        ClassifyElem {
            prog: Program::default(),
            start,
            outs: Vec::new(),
            noutputs: 0,
            drops: Drops::default(),
        }
    }

    /// Configures a Classifier-style element: one pattern argument per output, parsed by
    /// `parse`.
    pub(crate) fn configure_patterns(
        &mut self,
        args: &mut Args,
        cx: &ConfigCx,
        parse: fn(&str) -> Result<Expr, String>,
    ) -> Result<(), ()> {
        let pats = args.rest();
        if pats.len() != cx.noutputs() {
            args.error(format!(
                "need {} arguments, one per output port",
                cx.noutputs()
            ));
            return Err(());
        }
        match compile_patterns(&pats, parse, self.start) {
            Ok(p) => {
                self.set_program(p, pats.len());
                Ok(())
            }
            Err(e) => {
                args.error(e);
                Err(())
            }
        }
    }

    /// Installs a program for `noutputs` outputs.
    pub fn set_program(&mut self, prog: Program, noutputs: usize) {
        self.prog = prog;
        self.noutputs = noutputs;
    }

    #[inline]
    fn classify(&self, p: &Packet) -> Option<u32> {
        match self.start {
            Start::Data => self.prog.classify(p.data()),
            Start::Network => {
                let net = p.network_header().unwrap_or_else(|| p.data());
                match p.mac_header() {
                    Some(mac) if self.prog.reads_mac() => {
                        // Two bytes before the Ethernet header, as the program counts.
                        let mut m = [0u8; MAC_WINDOW];
                        let n = mac.len().min(MAC_WINDOW - 2);
                        m[2..2 + n].copy_from_slice(&mac[..n]);
                        self.prog.classify_with_mac(net, &m[..2 + n])
                    }
                    _ => self.prog.classify(net),
                }
            }
        }
    }

    /// Classifies a batch and pushes one sub-batch per output, in port order (the whole
    /// batch at once when every packet goes to the same output).
    pub fn push(&mut self, batch: Batch, cx: &mut Cx) {
        let mut ports = [NO_PORT; BATCH_MAX];
        for (p, o) in batch.iter().zip(ports.iter_mut()) {
            if let Some(k) = self.classify(p) {
                *o = k;
            }
        }
        let dropped = push_by_port(batch, &ports, self.noutputs, &mut self.outs, cx);
        self.drops.add(Reason::NoMatch, dropped);
    }

    /// The `program` handler: Click shows IP classifiers' offsets from 256 (network header)
    /// and 512 (transport header), Classifier's from the data start.
    pub fn program(&self) -> String {
        self.prog.unparse(match self.start {
            Start::Data => 0,
            Start::Network => 256,
        })
    }
}

/// Implements `Element` for a newtype around [`ClassifyElem`] with its own `configure`.
macro_rules! classify_element {
    ($ty:ident, $configure:item) => {
        impl sluice_core::Element for $ty {
            $configure

            fn push(&mut self, _port: usize, batch: sluice_core::Batch, cx: &mut sluice_core::Cx) {
                self.0.push(batch, cx);
            }

            fn handler_table(&self) -> sluice_core::Handlers {
                sluice_core::Table::<Self>::new()
                    .read("program", |e| e.0.program())
                    .drops(|e| &e.0.drops)
                    .action("reset_counts", |e| e.0.drops.reset())
                    .into()
            }
        }
    };
}
pub(crate) use classify_element;
