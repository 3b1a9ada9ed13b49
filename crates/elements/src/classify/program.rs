//! The decision machinery shared by Classifier, IPClassifier and IPFilter.
//!
//! Patterns are parsed into boolean expressions over *word tests* (four packet bytes at an
//! offset, ANDed with a mask, compared with a value). All patterns of an element are compiled
//! together into one decision DAG ([`Program`]): each instruction tests one word and names the
//! instruction (or output) to go to on success and on failure. Compilation shares every
//! sub-expression (no blow-up for `and`/`or`/`not`), and an optimisation pass then "drifts"
//! edges past tests whose outcome is already known on that edge (after `12/0806` succeeded, a
//! later `12/0800` is known to fail), so a packet never repeats a test already decided.
//!
//! A test whose bytes lie past the end of the packet fails; malformed packets never panic.
//!
//! IP programs ([`Program::compile_ip`]) are compiled twice: once for IPv6 packets (version
//! nibble 6) and once for all others, each with the tests that the version decides folded
//! away, so that one byte chooses the program and IPv4 packets run no test for the IPv6 half
//! of a pattern (nor IPv6 packets for the IPv4 half).

use std::fmt::Write;

/// Where a test's offset is counted from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Base {
    /// The packet data start (Classifier) or the network header (IPClassifier).
    Net,
    /// The transport header: the network header plus the IP header length (IHL × 4); for an
    /// IPv6 packet in an IP program ([`Program::compile_ip`]), the end of the 40-byte fixed
    /// header.
    Transp,
    /// The MAC (Ethernet) header, where the packet has one (IPClassifier's `ether host`),
    /// counted from two bytes before it as in Click, so that its addresses fill aligned words.
    Mac,
}

/// The comparison a test makes between the masked word and its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `word & mask == value`
    Eq,
    /// `word & mask > value` (unsigned)
    Gt,
    /// `word & mask < value` (unsigned)
    Lt,
}

/// One word test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Test {
    /// Offset base.
    pub base: Base,
    /// Byte offset of the word from the base.
    pub off: u16,
    /// Bits that matter (big-endian word of the four bytes at `off`).
    pub mask: u32,
    /// Value compared with the masked word.
    pub value: u32,
    /// The comparison.
    pub op: Op,
}

impl Test {
    /// True if the test holds for `w`, the big-endian word at its offset.
    #[inline]
    pub fn holds(&self, w: u32) -> bool {
        let v = w & self.mask;
        match self.op {
            Op::Eq => v == self.value,
            Op::Gt => v > self.value,
            Op::Lt => v < self.value,
        }
    }

    /// An equality test of `value` under `mask` at `off`.
    pub fn eq(base: Base, off: u16, mask: u32, value: u32) -> Test {
        Test {
            base,
            off,
            mask,
            value: value & mask,
            op: Op::Eq,
        }
    }

    /// A test of a `width`-byte field (1, 2 or 4) at byte `off`, under `fmask` (field bits).
    pub fn field(base: Base, off: u16, width: u8, fmask: u32, op: Op, value: u32) -> Test {
        let shift = (4 - width as u32) * 8;
        let fmask = if width == 4 {
            fmask
        } else {
            fmask & ((1u32 << (width as u32 * 8)) - 1)
        };
        Test {
            base,
            off,
            mask: fmask << shift,
            value: (value & fmask) << shift,
            op,
        }
    }

    /// Bytes past `off` that must exist for the test to be decidable.
    fn need(&self) -> usize {
        let last = (0..4).rev().find(|i| self.mask >> (24 - 8 * i) & 0xff != 0);
        self.off as usize + last.map_or(0, |l| l + 1)
    }
}

/// The test IP programs dispatch on: the IP version nibble is 6 ([`Program::compile_ip`]).
pub const IS_IPV6: Test = Test {
    base: Base::Net,
    off: 0,
    mask: VERSION,
    value: 0x6000_0000,
    op: Op::Eq,
};

/// The version nibble of the word at the network header.
const VERSION: u32 = 0xf000_0000;

/// Where an IPv6 packet's transport header starts (no extension header is followed).
pub const IPV6_TRANSP: u16 = 40;

/// True if [`IS_IPV6`] holds for the packet at `net`.
#[inline]
fn is_ipv6(net: &[u8]) -> bool {
    net.first().is_some_and(|b| b >> 4 == 6)
}

/// A boolean expression over word tests. Dropping one is iterative, so expressions of any
/// depth (long `and` chains, deeply nested patterns) are safe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// Always true.
    True,
    /// Always false.
    False,
    /// A word test.
    Test(Test),
    /// Both.
    And(Box<Expr>, Box<Expr>),
    /// Either.
    Or(Box<Expr>, Box<Expr>),
    /// Negation.
    Not(Box<Expr>),
    /// `c ? a : b`: the condition is tested once.
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
}

impl Expr {
    /// `a and b`.
    pub fn and(a: Expr, b: Expr) -> Expr {
        match (a, b) {
            (Expr::True, x) | (x, Expr::True) => x,
            (Expr::False, _) | (_, Expr::False) => Expr::False,
            (a, b) => Expr::And(Box::new(a), Box::new(b)),
        }
    }

    /// `a or b`.
    pub fn or(a: Expr, b: Expr) -> Expr {
        match (a, b) {
            (Expr::False, x) | (x, Expr::False) => x,
            (Expr::True, _) | (_, Expr::True) => Expr::True,
            (a, b) => Expr::Or(Box::new(a), Box::new(b)),
        }
    }

    /// `not a`.
    #[allow(clippy::should_implement_trait)]
    pub fn not(mut a: Expr) -> Expr {
        match &mut a {
            Expr::True => Expr::False,
            Expr::False => Expr::True,
            Expr::Not(x) => std::mem::replace(&mut **x, Expr::True),
            _ => Expr::Not(Box::new(a)),
        }
    }

    /// `c ? a : b`.
    pub fn cond(c: Expr, a: Expr, b: Expr) -> Expr {
        match c {
            Expr::True => a,
            Expr::False => b,
            c => Expr::Cond(Box::new(c), Box::new(a), Box::new(b)),
        }
    }

    /// Moves this node's children onto `out`, leaving it a leaf.
    fn take_children(&mut self, out: &mut Vec<Expr>) {
        let mut take = |x: &mut Box<Expr>| out.push(std::mem::replace(&mut **x, Expr::True));
        match self {
            Expr::And(a, b) | Expr::Or(a, b) => {
                take(a);
                take(b);
            }
            Expr::Not(a) => take(a),
            Expr::Cond(c, a, b) => {
                take(c);
                take(a);
                take(b);
            }
            Expr::True | Expr::False | Expr::Test(_) => {}
        }
    }
}

impl Drop for Expr {
    fn drop(&mut self) {
        let mut stack = Vec::new();
        self.take_children(&mut stack);
        while let Some(mut e) = stack.pop() {
            e.take_children(&mut stack);
        }
    }
}

/// Where an edge of the decision DAG leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Another instruction.
    Insn(u32),
    /// Emit on this output.
    Out(u32),
    /// No pattern matched: drop.
    Drop,
}

/// One instruction of the decision DAG.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Insn {
    /// What it tests.
    pub test: Test,
    need: u16,
    /// Where to go if the test holds.
    pub yes: Next,
    /// Where to go if it does not (or the packet is too short).
    pub no: Next,
}

/// A compiled classification program.
#[derive(Clone, Debug)]
pub struct Program {
    insns: Vec<Insn>,
    start: Next,
    /// Some test (of either half of an IP program) reads the MAC header.
    mac: bool,
    /// When every test reads from the network header: the check-free form, for packets
    /// that hold every test's word.
    safe: Option<SafePath>,
    /// An IP program's half for IPv6 packets (this one then decides all others).
    v6: Option<Box<Program>>,
}

/// Edge codes of a [`SafePath`] at and above this one are outputs (`SAFE_OUT + port`).
const SAFE_OUT: u32 = 1 << 31;
/// The edge code for a drop.
const SAFE_DROP: u32 = u32::MAX;

/// The check-free form of a program whose tests all read the network header: each step's
/// edges are single codes (a step index, `SAFE_OUT + port` or `SAFE_DROP`), chosen by the
/// test's outcome without a branch on the edge's kind.
#[derive(Clone, Debug)]
struct SafePath {
    /// The safe length: bytes that make every test's word fully present.
    len: usize,
    steps: Vec<SafeStep>,
    start: u32,
}

/// A step of a [`SafePath`]: the test, and the edges for "fails" and "holds".
#[derive(Clone, Copy, Debug)]
struct SafeStep {
    test: Test,
    next: [u32; 2],
}

impl SafePath {
    /// The check-free form of `p`, if all its tests read the network header.
    fn of(p: &Program) -> Option<SafePath> {
        let len = p.insns.iter().try_fold(0, |len, i| {
            let end = (i.test.off as usize + 4).max(i.need as usize);
            (i.test.base == Base::Net).then_some(len.max(end))
        })?;
        let code = |n: Next| match n {
            Next::Insn(j) => j,
            Next::Out(o) => SAFE_OUT + o,
            Next::Drop => SAFE_DROP,
        };
        let steps = p
            .insns
            .iter()
            .map(|i| SafeStep {
                test: i.test,
                next: [code(i.no), code(i.yes)],
            })
            .collect();
        Some(SafePath {
            len,
            steps,
            start: code(p.start),
        })
    }

    /// Classifies `net`, which holds at least `len` bytes.
    #[inline]
    fn classify(&self, net: &[u8]) -> Option<u32> {
        let mut n = self.start;
        while n < SAFE_OUT {
            let st = &self.steps[n as usize];
            let off = st.test.off as usize;
            let w = u32::from_be_bytes(net[off..off + 4].try_into().expect("4 bytes"));
            n = st.next[st.test.holds(w) as usize];
        }
        (n != SAFE_DROP).then(|| n - SAFE_OUT)
    }
}

impl Default for Program {
    fn default() -> Program {
        Program {
            insns: Vec::new(),
            start: Next::Drop,
            mac: false,
            safe: None,
            v6: None,
        }
    }
}

impl Program {
    /// Compiles `(expression, output)` rules, first match wins; no match means drop.
    pub fn compile(rules: &[(Expr, Option<u32>)]) -> Program {
        let mut p = Program::emit_rules(rules);
        p.finish();
        p
    }

    /// Compiles rules over IP headers: one program for IPv6 packets (the [`IS_IPV6`] test
    /// holds) and one for all others, chosen by the packet's first byte. In each, the tests
    /// that the version decides are folded away; in the IPv6 one, transport tests read at
    /// [`IPV6_TRANSP`]. The result decides as the single program would, with transport
    /// headers found by version.
    pub fn compile_ip(rules: &[(Expr, Option<u32>)]) -> Program {
        let mut p = Program::emit_rules(rules);
        let mut p6 = p.clone();
        p6.specialize(true);
        p6.finish();
        p.specialize(false);
        p.finish();
        p.mac |= p6.mac;
        p.v6 = Some(Box::new(p6));
        p
    }

    fn emit_rules(rules: &[(Expr, Option<u32>)]) -> Program {
        let mut p = Program::default();
        let mut next = Next::Drop;
        for (e, out) in rules.iter().rev() {
            let yes = match out {
                Some(o) => Next::Out(*o),
                None => Next::Drop,
            };
            next = p.emit(e, yes, next);
        }
        p.start = next;
        p
    }

    fn finish(&mut self) {
        self.optimize();
        self.mac = self.insns.iter().any(|i| i.test.base == Base::Mac);
        self.safe = SafePath::of(self);
    }

    /// What a test becomes on packets whose version is known to be 6 (`v6`) or known not to
    /// be: `Some` outcome when the version decides it, else `None` (the test may have been
    /// narrowed to the bits left undecided, or moved to where the IPv6 transport header is).
    fn on_family(t: &mut Test, v6: bool) -> Option<bool> {
        match t.base {
            Base::Transp if v6 => match t.off.checked_add(IPV6_TRANSP) {
                Some(off) => {
                    t.base = Base::Net;
                    t.off = off;
                    None
                }
                None => Some(false),
            },
            Base::Net if t.off == 0 && t.mask & VERSION == VERSION => {
                let six = IS_IPV6.value;
                if !v6 {
                    (t.op == Op::Eq && t.value & VERSION == six).then_some(false)
                } else if t.mask == VERSION {
                    Some(t.holds(six))
                } else if t.op == Op::Eq {
                    if t.value & VERSION != six {
                        return Some(false);
                    }
                    t.mask &= !VERSION;
                    t.value &= !VERSION;
                    None
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// Specialises a freshly emitted program to IPv6 packets (`v6`) or to all others: tests
    /// the version decides are bypassed (their predecessors jump to the decided edge).
    fn specialize(&mut self, v6: bool) {
        // Edges point to lower indices: by the time an instruction is seen, where each of
        // its targets really leads is known.
        let mut to: Vec<Next> = Vec::with_capacity(self.insns.len());
        let fwd = |to: &[Next], n: Next| match n {
            Next::Insn(k) => to[k as usize],
            n => n,
        };
        for j in 0..self.insns.len() {
            let ins = &mut self.insns[j];
            ins.yes = fwd(&to, ins.yes);
            ins.no = fwd(&to, ins.no);
            let decided = if ins.yes == ins.no {
                Some(true)
            } else {
                Self::on_family(&mut ins.test, v6)
            };
            ins.need = ins.test.need().min(u16::MAX as usize) as u16;
            to.push(match decided {
                Some(true) => ins.yes,
                Some(false) => ins.no,
                None => Next::Insn(j as u32),
            });
        }
        self.start = fwd(&to, self.start);
    }

    /// True if a test reads the MAC header ([`Program::classify_with_mac`]).
    pub fn reads_mac(&self) -> bool {
        self.mac
    }

    /// Emits the instructions deciding `e` (to `yes` or `no`) and returns its entry point.
    /// Iterative: an expression's depth costs heap, not stack.
    fn emit(&mut self, e: &Expr, yes: Next, no: Next) -> Next {
        enum Task<'a> {
            Eval(&'a Expr, Next, Next),
            /// `b` of `a and b` is done: decide `a` with its result as the success target.
            AndFirst(&'a Expr, Next),
            /// `b` of `a or b` is done: decide `a` with its result as the failure target.
            OrFirst(&'a Expr, Next),
            /// Both branches of `c ? a : b` are done: decide `c` between them.
            CondTest(&'a Expr),
        }
        let mut tasks = vec![Task::Eval(e, yes, no)];
        let mut results: Vec<Next> = Vec::new();
        while let Some(t) = tasks.pop() {
            match t {
                Task::Eval(e, yes, no) => match e {
                    Expr::True => results.push(yes),
                    Expr::False => results.push(no),
                    Expr::Test(t) => {
                        if yes == no {
                            results.push(yes);
                            continue;
                        }
                        let need = t.need().min(u16::MAX as usize) as u16;
                        self.insns.push(Insn {
                            test: *t,
                            need,
                            yes,
                            no,
                        });
                        results.push(Next::Insn(self.insns.len() as u32 - 1));
                    }
                    Expr::And(a, b) => {
                        tasks.push(Task::AndFirst(a, no));
                        tasks.push(Task::Eval(b, yes, no));
                    }
                    Expr::Or(a, b) => {
                        tasks.push(Task::OrFirst(a, yes));
                        tasks.push(Task::Eval(b, yes, no));
                    }
                    Expr::Not(a) => tasks.push(Task::Eval(a, no, yes)),
                    Expr::Cond(c, a, b) => {
                        tasks.push(Task::CondTest(c));
                        tasks.push(Task::Eval(b, yes, no));
                        tasks.push(Task::Eval(a, yes, no));
                    }
                },
                Task::AndFirst(a, no) => {
                    let b = results.pop().unwrap_or(Next::Drop);
                    tasks.push(Task::Eval(a, b, no));
                }
                Task::OrFirst(a, yes) => {
                    let b = results.pop().unwrap_or(Next::Drop);
                    tasks.push(Task::Eval(a, yes, b));
                }
                Task::CondTest(c) => {
                    let b = results.pop().unwrap_or(Next::Drop);
                    let a = results.pop().unwrap_or(Next::Drop);
                    tasks.push(Task::Eval(c, a, b));
                }
            }
        }
        results.pop().unwrap_or(Next::Drop)
    }

    /// Outcome of `later` when `earlier` is known to have answered `outcome`, if implied.
    fn implied(earlier: &Test, outcome: bool, later: &Test) -> Option<bool> {
        if earlier.base != later.base || earlier.off != later.off {
            return None;
        }
        if earlier.op != Op::Eq || later.op != Op::Eq {
            return (earlier == later).then_some(outcome);
        }
        if outcome {
            // The bits under earlier.mask are known; decide later if its mask is covered.
            if later.mask & !earlier.mask == 0 {
                return Some(earlier.value & later.mask == later.value);
            }
            // Contradiction on the shared bits decides it too.
            let common = earlier.mask & later.mask;
            if earlier.value & common != later.value & common {
                return Some(false);
            }
            None
        } else {
            (earlier.mask == later.mask && earlier.value == later.value).then_some(false)
        }
    }

    /// Edge drifting: every instruction learns the test outcomes known on all paths into it;
    /// each edge then skips instructions whose outcome those facts (plus the edge's own
    /// outcome) decide, at most `MAX_DRIFT` of them per edge (so long chains of decided tests
    /// cost linear time). Unreachable instructions are then removed and the rest renumbered.
    fn optimize(&mut self) {
        const MAX_FACTS: usize = 64;
        const MAX_DRIFT: usize = 64;
        let n = self.insns.len();
        // Edges point to lower original indices: descending index is a topological order.
        let mut facts: Vec<Option<Vec<(Test, bool)>>> = vec![None; n];
        if let Next::Insn(s) = self.start {
            facts[s as usize] = Some(Vec::new());
        }
        for i in (0..n).rev() {
            let Some(known) = facts[i].take() else {
                continue;
            };
            for side in [true, false] {
                let mut f = known.clone();
                if f.len() >= MAX_FACTS {
                    f.remove(0);
                }
                f.push((self.insns[i].test, side));
                let mut nx = if side {
                    self.insns[i].yes
                } else {
                    self.insns[i].no
                };
                let mut steps = 0;
                while let Next::Insn(j) = nx {
                    if steps == MAX_DRIFT {
                        break;
                    }
                    steps += 1;
                    let later = &self.insns[j as usize];
                    match f
                        .iter()
                        .rev()
                        .find_map(|(t, o)| Self::implied(t, *o, &later.test))
                    {
                        Some(true) => nx = later.yes,
                        Some(false) => nx = later.no,
                        None => break,
                    }
                }
                if side {
                    self.insns[i].yes = nx;
                } else {
                    self.insns[i].no = nx;
                }
                if let Next::Insn(j) = nx {
                    let slot = &mut facts[j as usize];
                    match slot {
                        None => *slot = Some(f),
                        Some(prev) => prev.retain(|x| f.contains(x)),
                    }
                }
            }
        }
        // Keep only reachable instructions, in an order where edges go forward.
        let mut order = Vec::new();
        let mut seen = vec![false; self.insns.len()];
        let mut stack = vec![self.start];
        while let Some(n) = stack.pop() {
            if let Next::Insn(j) = n {
                if !seen[j as usize] {
                    seen[j as usize] = true;
                    order.push(j);
                    stack.push(self.insns[j as usize].no);
                    stack.push(self.insns[j as usize].yes);
                }
            }
        }
        order.sort_unstable_by(|a, b| b.cmp(a)); // emitted last = closer to the start
        let mut newidx = vec![u32::MAX; self.insns.len()];
        for (k, &j) in order.iter().enumerate() {
            newidx[j as usize] = k as u32;
        }
        let map = |n: Next| match n {
            Next::Insn(j) => Next::Insn(newidx[j as usize]),
            x => x,
        };
        let insns = order
            .iter()
            .map(|&j| {
                let mut ins = self.insns[j as usize];
                ins.yes = map(ins.yes);
                ins.no = map(ins.no);
                ins
            })
            .collect();
        self.insns = insns;
        self.start = map(self.start);
    }

    /// Number of instructions (of an IP program, of its half for packets other than IPv6).
    pub fn len(&self) -> usize {
        self.insns.len()
    }

    /// True if the program decides without looking at the packet.
    pub fn is_empty(&self) -> bool {
        self.insns.is_empty()
    }

    /// The instructions.
    pub fn insns(&self) -> &[Insn] {
        &self.insns
    }

    /// Classifies the bytes `net` (network header or data start). Returns the output, or
    /// `None` for a drop.
    #[inline]
    pub fn classify(&self, net: &[u8]) -> Option<u32> {
        match &self.v6 {
            Some(p6) if is_ipv6(net) => p6.classify_v6(net),
            _ => self.classify_half(net),
        }
    }

    /// Classifies `net` by this program, not choosing a half.
    #[inline]
    fn classify_half(&self, net: &[u8]) -> Option<u32> {
        match &self.safe {
            Some(safe) if net.len() >= safe.len => safe.classify(net),
            _ => self.checked(net, &[]),
        }
    }

    /// [`Program::classify_half`] of an IPv6 packet, out of line: so the other packets' path
    /// is a predicted branch, its first test's load never waiting for the version byte.
    #[inline(never)]
    fn classify_v6(&self, net: &[u8]) -> Option<u32> {
        self.classify_half(net)
    }

    /// Follows the program from its start, taking each instruction's yes branch where
    /// `holds` says its test holds; returns the output reached (`None`: drop).
    #[inline]
    fn walk(&self, mut holds: impl FnMut(&Insn) -> bool) -> Option<u32> {
        let mut n = self.start;
        loop {
            match n {
                Next::Out(o) => return Some(o),
                Next::Drop => return None,
                Next::Insn(j) => {
                    let ins = &self.insns[j as usize];
                    n = if holds(ins) { ins.yes } else { ins.no };
                }
            }
        }
    }

    /// Like [`Program::classify`], with the bytes that MAC-header tests read: two bytes, then
    /// the MAC header (a test past their end fails, as a test past the packet's end does).
    #[inline]
    pub fn classify_with_mac(&self, net: &[u8], mac: &[u8]) -> Option<u32> {
        match &self.v6 {
            Some(p6) if is_ipv6(net) => p6.checked_v6(net, mac),
            _ => self.checked(net, mac),
        }
    }

    /// [`Program::checked`] of an IPv6 packet, out of line (see [`Program::classify_v6`]).
    #[inline(never)]
    fn checked_v6(&self, net: &[u8], mac: &[u8]) -> Option<u32> {
        self.checked(net, mac)
    }

    /// Runs this program (not choosing a half), checking each test's bytes.
    #[inline]
    fn checked(&self, net: &[u8], mac: &[u8]) -> Option<u32> {
        // Transport header offset, computed lazily.
        let mut transp: Option<usize> = None;
        self.walk(|ins| {
            let (data, base) = match ins.test.base {
                Base::Net => (net, 0),
                Base::Transp => (
                    net,
                    *transp.get_or_insert_with(|| {
                        net.first()
                            .map_or(usize::MAX / 2, |b| (*b as usize & 15) * 4)
                    }),
                ),
                Base::Mac => (mac, 0),
            };
            match base.checked_add(ins.need as usize) {
                Some(end) if end <= data.len() => {
                    let off = base + ins.test.off as usize;
                    let w = match data.get(off..off + 4) {
                        Some(src) => u32::from_be_bytes([src[0], src[1], src[2], src[3]]),
                        None => {
                            // Near the end: the missing bytes read as zero.
                            let mut w = [0u8; 4];
                            let avail = data.len().saturating_sub(off).min(4);
                            if let Some(src) = data.get(off..off + avail) {
                                w[..avail].copy_from_slice(src);
                            }
                            u32::from_be_bytes(w)
                        }
                    };
                    ins.test.holds(w)
                }
                _ => false,
            }
        })
    }

    /// Human-readable program (the `program` handler), in Click's layout: one line per test,
    /// `STEP OFFSET/VALUE%MASK  yes->…  no->…` (a test other than equality adds its operator),
    /// or `all->[OUT]` when no test is needed, then the safe length (the bytes the tests may
    /// read) and the alignment offset. Offsets from the network header start at `net_base`
    /// and those from the transport header at `2 * net_base` (Click's IPFilter shows them
    /// from 256 and 512; Classifier from 0); MAC header offsets from 0.
    ///
    /// An IP program shows the half for packets other than IPv6 first, then a line
    /// `ipv6 (version 6) packets:` and the IPv6 half, unless that half drops every packet or
    /// is the same as the other (IPv4-only patterns thus print as in Click).
    pub fn unparse(&self, net_base: usize) -> String {
        let mut s = self.unparse_half(net_base);
        if let Some(p6) = &self.v6 {
            if p6.start != Next::Drop && (p6.insns != self.insns || p6.start != self.start) {
                s += "ipv6 (version 6) packets:\n";
                s += &p6.unparse_half(net_base);
            }
        }
        s
    }

    fn unparse_half(&self, net_base: usize) -> String {
        let nx = |n: Next| match n {
            Next::Insn(j) => format!("step {}", j),
            Next::Out(o) => format!("[{}]", o),
            Next::Drop => "[X]".to_string(),
        };
        let base = |t: &Test| match t.base {
            Base::Net => net_base,
            Base::Transp => 2 * net_base,
            Base::Mac => 0,
        };
        let mut s = String::new();
        if self.insns.is_empty() {
            let _ = writeln!(s, "all->{}", nx(self.start));
        }
        let mut safe = 0;
        for (i, ins) in self.insns.iter().enumerate() {
            let t = &ins.test;
            let mut off = base(t) + t.off as usize;
            safe = safe.max(base(t) + t.need());
            // Click's words are aligned: show a test within one aligned word from there.
            let shift = 8 * (off % 4) as u32;
            let (mut value, mut mask) = (t.value, t.mask);
            if shift > 0 && mask & ((1u32 << shift) - 1) == 0 {
                off -= off % 4;
                value >>= shift;
                mask >>= shift;
            }
            let op = match t.op {
                Op::Eq => "",
                Op::Gt => " >",
                Op::Lt => " <",
            };
            let _ = writeln!(
                s,
                "{:2} {:3}/{:08x}%{:08x}{}  yes->{}  no->{}",
                i,
                off,
                value,
                mask,
                op,
                nx(ins.yes),
                nx(ins.no)
            );
        }
        let _ = writeln!(s, "safe length {}", safe);
        let _ = writeln!(s, "alignment offset 0");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(off: u16, mask: u32, value: u32) -> Expr {
        Expr::Test(Test::eq(Base::Net, off, mask, value))
    }

    #[test]
    fn drift_skips_decided_tests() {
        // 12/0806 20/0001, 12/0806 20/0002, 12/0800, -
        let arp = || t(12, 0xffff_0000, 0x0806_0000);
        let rules = vec![
            (Expr::and(arp(), t(20, 0xffff_0000, 0x0001_0000)), Some(0)),
            (Expr::and(arp(), t(20, 0xffff_0000, 0x0002_0000)), Some(1)),
            (t(12, 0xffff_0000, 0x0800_0000), Some(2)),
            (Expr::True, Some(3)),
        ];
        let p = Program::compile(&rules);
        // arp test, op==1, op==2, ip test: four instructions, arp tested only once.
        assert_eq!(p.len(), 4, "{}", p.unparse(0));
        let mut pkt = vec![0u8; 42];
        pkt[12] = 8;
        pkt[13] = 6;
        pkt[21] = 2;
        assert_eq!(p.classify(&pkt), Some(1));
        pkt[21] = 1;
        assert_eq!(p.classify(&pkt), Some(0));
        pkt[13] = 0;
        assert_eq!(p.classify(&pkt), Some(2));
        assert_eq!(p.classify(&pkt[..10]), Some(3));
        assert_eq!(p.classify(&[]), Some(3));
    }

    #[test]
    fn short_packets_fail_tests() {
        let p = Program::compile(&[(t(2, 0xff00_0000, 0x1100_0000), Some(0))]);
        assert_eq!(p.classify(&[0, 0, 0x11]), Some(0));
        assert_eq!(p.classify(&[0, 0]), None);
        let p = Program::compile(&[(Expr::not(t(2, 0xff00_0000, 0x1100_0000)), Some(0))]);
        assert_eq!(p.classify(&[0, 0]), Some(0));
    }

    #[test]
    fn safe_path_agrees_with_checked_path() {
        let arp = || t(12, 0xffff_0000, 0x0806_0000);
        let rules = vec![
            (Expr::and(arp(), t(20, 0xffff_0000, 0x0001_0000)), Some(0)),
            (
                Expr::Test(Test {
                    op: Op::Gt,
                    ..Test::eq(Base::Net, 30, 0xff00, 0x1200)
                }),
                Some(1),
            ),
            (Expr::not(t(14, 0xf000_0000, 0x4000_0000)), Some(2)),
        ];
        let p = Program::compile(&rules);
        assert_eq!(p.safe.as_ref().map(|s| s.len), Some(34));
        let mut pkt = [0u8; 40];
        for seed in 0u32..5_000 {
            for (i, b) in pkt.iter_mut().enumerate() {
                *b = (seed.wrapping_mul(2_654_435_761) >> (i % 24)) as u8;
            }
            pkt[12] = 8;
            pkt[13] = if seed % 2 == 0 { 6 } else { 0 };
            for len in [0, 13, 20, 33, 34, 40] {
                let d = &pkt[..len];
                assert_eq!(p.classify(d), p.classify_with_mac(d, &[]), "len {}", len);
            }
        }
    }
}
