//! Click port-count and processing specifications, and the resolution of agnostic ports.
//!
//! A port-count spec is `IN/OUT` where each side is `N`, `N-M`, `N-` or `-` (any number), and
//! the output side may be `=` (same as the inputs). A processing spec is `IN/OUT` where each
//! side is a string of `h` (push), `l` (pull) or `a` (agnostic) codes for ports 0, 1, …; the
//! last code repeats for higher ports.

/// The processing of one port once agnostic ports are resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Processing {
    /// Packets are pushed through this port.
    Push,
    /// Packets are pulled through this port.
    Pull,
    /// Push or pull, decided by the neighbours.
    Agnostic,
}

impl Processing {
    /// Lower-case name as Click prints it.
    pub fn name(self) -> &'static str {
        match self {
            Processing::Push => "push",
            Processing::Pull => "pull",
            Processing::Agnostic => "agnostic",
        }
    }

    fn from_code(c: u8) -> Option<Processing> {
        match c {
            b'h' => Some(Processing::Push),
            b'l' => Some(Processing::Pull),
            b'a' => Some(Processing::Agnostic),
            _ => None,
        }
    }
}

/// An allowed range of port counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortRange {
    /// Smallest allowed count.
    pub min: usize,
    /// Largest allowed count (`usize::MAX` for unbounded).
    pub max: usize,
}

/// The parsed port-count spec of a class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortCount {
    /// Allowed number of inputs.
    pub inputs: PortRange,
    /// Allowed number of outputs; `None` means "same as inputs" (`=`).
    pub outputs: Option<PortRange>,
}

fn parse_range(s: &str) -> Option<PortRange> {
    if s == "-" {
        return Some(PortRange {
            min: 0,
            max: usize::MAX,
        });
    }
    match s.split_once('-') {
        None => {
            let n = s.parse().ok()?;
            Some(PortRange { min: n, max: n })
        }
        Some((a, "")) => Some(PortRange {
            min: a.parse().ok()?,
            max: usize::MAX,
        }),
        Some((a, b)) => Some(PortRange {
            min: a.parse().ok()?,
            max: b.parse().ok()?,
        }),
    }
}

impl PortCount {
    /// Parses a spec such as `1/1`, `1/1-2`, `-/=`, `0/1`.
    pub fn parse(spec: &str) -> Option<PortCount> {
        let (i, o) = spec.split_once('/').unwrap_or((spec, spec));
        let inputs = parse_range(i)?;
        let outputs = if o == "=" {
            None
        } else {
            Some(parse_range(o)?)
        };
        Some(PortCount { inputs, outputs })
    }

    /// The port counts an element gets for `nin` inputs and `nout` outputs in use, as Click's
    /// `notify_nports` sets them: each count moved into its allowed range (`=`: as many
    /// outputs as inputs). Connections to ports past these counts are errors ("has no input
    /// N"); ports below them that nothing uses are errors too ("input N unused").
    pub fn clamp(&self, nin: usize, nout: usize) -> (usize, usize) {
        let nin = nin.clamp(self.inputs.min, self.inputs.max);
        let nout = match &self.outputs {
            Some(r) => nout.clamp(r.min, r.max),
            None => nin,
        };
        (nin, nout)
    }
}

/// The parsed processing spec of a class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessingSpec {
    inputs: Vec<Processing>,
    outputs: Vec<Processing>,
}

impl ProcessingSpec {
    /// Parses a spec such as `a/a`, `h/lh`, `l/h`.
    pub fn parse(spec: &str) -> Option<ProcessingSpec> {
        let (i, o) = spec.split_once('/').unwrap_or((spec, spec));
        let side = |s: &str| -> Option<Vec<Processing>> {
            if s.is_empty() {
                return None;
            }
            s.bytes().map(Processing::from_code).collect()
        };
        Some(ProcessingSpec {
            inputs: side(i)?,
            outputs: side(o)?,
        })
    }

    /// Declared processing of input `port`.
    pub fn input(&self, port: usize) -> Processing {
        self.inputs[port.min(self.inputs.len() - 1)]
    }

    /// Declared processing of output `port`.
    pub fn output(&self, port: usize) -> Processing {
        self.outputs[port.min(self.outputs.len() - 1)]
    }
}

/// A flow code (`x/x`, `#/#`, `x/y`, `xy/x`): which inputs can reach which outputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowCode {
    inputs: Vec<u8>,
    outputs: Vec<u8>,
}

impl FlowCode {
    /// Every input flows to every output (`x/x`).
    pub fn all() -> FlowCode {
        FlowCode {
            inputs: vec![b'x'],
            outputs: vec![b'x'],
        }
    }

    /// Parses a flow code; an empty string means every input flows to every output.
    pub fn parse(spec: &str) -> Option<FlowCode> {
        if spec.is_empty() {
            return Some(FlowCode::all());
        }
        let (i, o) = spec.split_once('/')?;
        if i.is_empty() || o.is_empty() {
            return None;
        }
        Some(FlowCode {
            inputs: i.bytes().collect(),
            outputs: o.bytes().collect(),
        })
    }

    /// True if packets arriving on input `i` may leave on output `o`.
    pub fn flows(&self, i: usize, o: usize) -> bool {
        let ci = self.inputs[i.min(self.inputs.len() - 1)];
        let co = self.outputs[o.min(self.outputs.len() - 1)];
        if ci == b'#' || co == b'#' {
            ci == co && i == o
        } else {
            ci == co
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_counts() {
        let p = PortCount::parse("1/1-2").unwrap();
        assert_eq!(p.clamp(1, 1), (1, 1));
        assert_eq!(p.clamp(2, 3), (1, 2));
        assert_eq!(p.clamp(0, 0), (1, 1));
        let q = PortCount::parse("-/=").unwrap();
        assert_eq!(q.clamp(3, 2), (3, 3));
        assert_eq!(PortCount::parse("1-/0").unwrap().clamp(0, 4), (1, 0));
        assert!(PortCount::parse("x/1").is_none());
    }

    #[test]
    fn processing_repeats_last_code() {
        let s = ProcessingSpec::parse("h/lh").unwrap();
        assert_eq!(s.input(3), Processing::Push);
        assert_eq!(s.output(0), Processing::Pull);
        assert_eq!(s.output(5), Processing::Push);
        assert!(ProcessingSpec::parse("q/h").is_none());
    }

    #[test]
    fn flow_codes() {
        let all = FlowCode::parse("").unwrap();
        assert!(all.flows(0, 3));
        let same = FlowCode::parse("#/#").unwrap();
        assert!(same.flows(2, 2) && !same.flows(1, 2));
        assert!(FlowCode::parse("xy").is_none() && FlowCode::parse("/x").is_none());
        let none = FlowCode::parse("x/y").unwrap();
        assert!(!none.flows(0, 0));
    }
}
