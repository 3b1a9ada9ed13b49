//! Declarative handlers and typed drop reasons.
//!
//! An element declares its handlers as a table ([`Table`]) bound to its fields and
//! functions, the way Click's `add_data_handlers` and `add_read_handler` do; the router
//! derives from it the `handlers` listing, the CHECKREAD/CHECKWRITE answers, how copies on
//! several threads merge, and the handler section of `doc`. Drops are counted by reason in a
//! [`Drops`] field over an enum declared with [`drop_reasons!`](crate::drop_reasons); a table
//! that binds it gets `drops` and `drop_details`, and the router-wide `drops` handler lists
//! every element's drops by reason.

use std::any::Any;
use std::fmt::Display;
use std::marker::PhantomData;

use sluice_lang::args::FromArg;

use crate::context::Cx;
use crate::element::Handler;

/// Answers a read: the element (as `Any`) and the parameter (empty without one).
type ReadFn = dyn Fn(&dyn Any, &str) -> Result<String, String> + Send + Sync;
/// Answers a read that needs the element mutably (a data handler's field accessor).
type ReadMutFn = dyn Fn(&mut dyn Any, &str) -> Result<String, String> + Send + Sync;
/// Answers a write: the element (as `Any`), the value and the element's context.
type WriteFn = dyn Fn(&mut dyn Any, &str, &mut Cx) -> Result<(), String> + Send + Sync;
/// Answers a write to an element that synchronises its own state (a thread-safe form).
type WriteRefFn = dyn Fn(&dyn Any, &str, &mut Cx) -> Result<(), String> + Send + Sync;
/// The drop counts of an element (as `Any`), by reason.
type DropsFn = dyn Fn(&dyn Any) -> Vec<(&'static str, u64)> + Send + Sync;

/// Name of the handler giving an element's total drops.
pub const DROPS: &str = "drops";
/// Name of the handler giving an element's drops by reason.
pub const DROP_DETAILS: &str = "drop_details";
/// Name of the handler giving the bytes of an element's data structure (its footprint).
pub const FOOTPRINT_BYTES: &str = "footprint_bytes";
/// Name of the handler giving the accesses to that structure per packet.
pub const ACCESSES_PER_PACKET: &str = "accesses_per_packet";

/// What an element's data structure costs the caches: its size and how many of its cache
/// lines a packet reads (the placement planner's `S(i)` and `N(i)`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Footprint {
    /// Bytes of the structure.
    pub bytes: u64,
    /// Cache lines of it read per packet, on average.
    pub accesses: f64,
}

/// How a handler reads: through a shared reference to the element (any copy, including the
/// thread-safe form of an element several threads use), or through a mutable one.
enum Reader {
    Ref(Box<ReadFn>),
    Mut(Box<ReadMutFn>),
}

/// How a handler writes: through a mutable reference, or (thread-safe forms) a shared one.
enum Writer {
    Mut(Box<WriteFn>),
    Ref(Box<WriteRefFn>),
}

/// One declared handler: what it is and the functions that answer it.
struct Entry {
    spec: Handler,
    read: Option<Reader>,
    write: Option<Writer>,
}

/// An element's handlers, as the router uses them (built with [`Table`]).
#[derive(Default)]
pub struct Handlers {
    entries: Vec<Entry>,
    drops: Option<Box<DropsFn>>,
    /// True when `drops` is the total of the typed drops (not an element's own handler).
    auto_total: bool,
    /// True when `drop_details` lists the typed drops (not an element's own handler).
    auto_details: bool,
}

impl Handlers {
    /// The declared handlers, in declaration order.
    pub fn specs(&self) -> impl Iterator<Item = &Handler> {
        self.entries.iter().map(|e| &e.spec)
    }

    /// The declaration of handler `name`.
    pub fn spec(&self, name: &str) -> Option<&Handler> {
        self.specs().find(|h| h.name == name)
    }

    /// True if the element counts drops by reason ([`Table::drops`]).
    pub fn has_drops(&self) -> bool {
        self.drops.is_some()
    }

    /// True if handler `name` reports the typed drops, to which the router adds the packets the
    /// element pushed to unconnected outputs: `drop_details`, and `drops` unless the element
    /// declares its own.
    pub fn counts_drops(&self, name: &str) -> bool {
        self.has_drops()
            && ((name == DROPS && self.auto_total) || (name == DROP_DETAILS && self.auto_details))
    }

    /// Reads handler `name` of `el` with `param` (empty for none); `None` if the table has no
    /// readable handler of that name.
    pub fn read(
        &self,
        el: &mut dyn Any,
        name: &str,
        param: &str,
    ) -> Option<Result<String, String>> {
        Some(match self.entry(name)?.read.as_ref()? {
            Reader::Ref(f) => f(el, param),
            Reader::Mut(f) => f(el, param),
        })
    }

    /// [`Handlers::read`] through a shared reference, for an element that synchronises its
    /// own state (a table built only from handlers that read through `&E`).
    pub fn read_ref(
        &self,
        el: &dyn Any,
        name: &str,
        param: &str,
    ) -> Option<Result<String, String>> {
        Some(match self.entry(name)?.read.as_ref()? {
            Reader::Ref(f) => f(el, param),
            Reader::Mut(_) => Err(format!("handler '{}' needs exclusive access", name)),
        })
    }

    /// The entry of handler `name`.
    fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.spec.name == name)
    }

    /// Writes `value` to handler `name` of `el`; `None` if the table has no writable handler
    /// of that name.
    pub fn write(
        &self,
        el: &mut dyn Any,
        name: &str,
        value: &str,
        cx: &mut Cx,
    ) -> Option<Result<(), String>> {
        Some(match self.entry(name)?.write.as_ref()? {
            Writer::Mut(f) => f(el, value, cx),
            Writer::Ref(f) => f(el, value, cx),
        })
    }

    /// [`Handlers::write`] through a shared reference (see [`Handlers::read_ref`]).
    pub fn write_ref(
        &self,
        el: &dyn Any,
        name: &str,
        value: &str,
        cx: &mut Cx,
    ) -> Option<Result<(), String>> {
        Some(match self.entry(name)?.write.as_ref()? {
            Writer::Ref(f) => f(el, value, cx),
            Writer::Mut(_) => Err(format!("handler '{}' needs exclusive access", name)),
        })
    }

    /// The drop counts of `el` by reason (empty if it declares none).
    pub fn drop_counts(&self, el: &dyn Any) -> Vec<(&'static str, u64)> {
        self.drops.as_ref().map(|f| f(el)).unwrap_or_default()
    }
}

/// Builds the handler table of element type `E`.
///
/// ```ignore
/// Table::<DecIPTTL>::new()
///     .read("drops", |e| e.expired)
///     .data("active", |e| &mut e.active)
///     .drops(|e| &e.drops)
///     .into()
/// ```
pub struct Table<E> {
    h: Handlers,
    _e: PhantomData<fn(E)>,
}

impl<E: Any> Default for Table<E> {
    fn default() -> Self {
        Table::new()
    }
}

impl<E: Any> From<Table<E>> for Handlers {
    fn from(t: Table<E>) -> Handlers {
        t.h
    }
}

/// The element behind a table function's `Any`.
fn downcast<E: Any>(el: &mut dyn Any) -> &mut E {
    el.downcast_mut::<E>().expect(SAME_TYPE)
}

/// [`downcast`] for a shared reference.
fn downcast_ref<E: Any>(el: &dyn Any) -> &E {
    el.downcast_ref::<E>().expect(SAME_TYPE)
}

const SAME_TYPE: &str = "a handler table is used with the element type that built it";

impl<E: Any> Table<E> {
    /// An empty table.
    pub fn new() -> Self {
        Table {
            h: Handlers::default(),
            _e: PhantomData,
        }
    }

    /// The entry for `name`, created if new.
    fn entry(&mut self, name: &'static str) -> &mut Entry {
        let i = match self.h.entries.iter().position(|e| e.spec.name == name) {
            Some(i) => i,
            None => {
                self.h.entries.push(Entry {
                    spec: Handler {
                        name,
                        read: false,
                        write: false,
                        setting: false,
                        param: false,
                    },
                    read: None,
                    write: None,
                });
                self.h.entries.len() - 1
            }
        };
        &mut self.h.entries[i]
    }

    /// A read handler showing `f(element)`. Copies on several threads are summed when the
    /// values are numbers (a count); see [`Table::setting`].
    pub fn read<T: Display + 'static>(mut self, name: &'static str, f: fn(&E) -> T) -> Self {
        self.h.auto_total &= name != DROPS;
        self.h.auto_details &= name != DROP_DETAILS;
        self.reader(name, move |e| f(e).to_string());
        self
    }

    /// A read handler answered by a closure, for handlers a configuration names (a Script's
    /// exported variables); see [`Table::read`].
    pub fn read_with(
        mut self,
        name: &'static str,
        f: impl Fn(&E) -> String + Send + Sync + 'static,
    ) -> Self {
        self.h.auto_total &= name != DROPS;
        self.h.auto_details &= name != DROP_DETAILS;
        self.reader(name, f);
        self
    }

    /// Declares read handler `name` answered by `f`.
    fn reader(&mut self, name: &'static str, f: impl Fn(&E) -> String + Send + Sync + 'static) {
        let e = self.entry(name);
        e.spec.read = true;
        e.read = Some(Reader::Ref(Box::new(move |el, _| {
            Ok(f(downcast_ref::<E>(el)))
        })));
    }

    /// A read handler with a parameter (Click's read-with-parameter, such as a route table's
    /// `lookup ADDR`); the parameter is empty when none is given.
    pub fn read_param(
        mut self,
        name: &'static str,
        f: fn(&E, &str) -> Result<String, String>,
    ) -> Self {
        let e = self.entry(name);
        e.spec.read = true;
        e.spec.param = true;
        e.read = Some(Reader::Ref(Box::new(move |el, p| {
            f(downcast_ref::<E>(el), p)
        })));
        self
    }

    /// A write handler calling `f(element, value, cx)`.
    pub fn write(
        mut self,
        name: &'static str,
        f: fn(&mut E, &str, &mut Cx) -> Result<(), String>,
    ) -> Self {
        let e = self.entry(name);
        e.spec.write = true;
        e.write = Some(Writer::Mut(Box::new(move |el, v, cx| {
            f(downcast::<E>(el), v, cx)
        })));
        self
    }

    /// A write handler that ignores its value and calls `f(element)` (Click's button
    /// handlers, such as `reset`).
    pub fn action(mut self, name: &'static str, f: fn(&mut E)) -> Self {
        let e = self.entry(name);
        e.spec.write = true;
        e.write = Some(Writer::Mut(Box::new(move |el, _, _| {
            f(downcast::<E>(el));
            Ok(())
        })));
        self
    }

    /// [`Table::write`] for an element that synchronises its own state (a thread-safe form):
    /// `f` gets a shared reference.
    pub fn write_ref(
        mut self,
        name: &'static str,
        f: fn(&E, &str, &mut Cx) -> Result<(), String>,
    ) -> Self {
        let e = self.entry(name);
        e.spec.write = true;
        e.write = Some(Writer::Ref(Box::new(move |el, v, cx| {
            f(downcast_ref::<E>(el), v, cx)
        })));
        self
    }

    /// [`Table::action`] for an element that synchronises its own state (atomics in a
    /// thread-safe form): `f` gets a shared reference.
    pub fn action_ref(mut self, name: &'static str, f: fn(&E)) -> Self {
        let e = self.entry(name);
        e.spec.write = true;
        e.write = Some(Writer::Ref(Box::new(move |el, _, _| {
            f(downcast_ref::<E>(el));
            Ok(())
        })));
        self
    }

    /// A write handler taking a value of type `T` (parsed as a configuration argument) and
    /// calling `f(element, value)`.
    pub fn write_as<T: FromArg + 'static>(mut self, name: &'static str, f: fn(&mut E, T)) -> Self {
        let e = self.entry(name);
        e.spec.write = true;
        e.write = Some(Writer::Mut(Box::new(move |el, v, _| {
            let v = T::from_arg(v.trim())?;
            f(downcast::<E>(el), v);
            Ok(())
        })));
        self
    }

    /// A read/write setting bound to a field (Click's data handlers): reads show it, writes
    /// parse a `T` and store it. Marked as a [`Table::setting`].
    pub fn data<T: Display + FromArg + 'static>(
        mut self,
        name: &'static str,
        f: fn(&mut E) -> &mut T,
    ) -> Self {
        let e = self.entry(name);
        e.spec.read = true;
        e.spec.write = true;
        e.spec.setting = true;
        e.read = Some(Reader::Mut(Box::new(move |el, _| {
            Ok(f(downcast::<E>(el)).to_string())
        })));
        e.write = Some(Writer::Mut(Box::new(move |el, v, _| {
            *f(downcast::<E>(el)) = T::from_arg(v.trim())?;
            Ok(())
        })));
        self
    }

    /// Marks the last declared handler as a setting: every copy on every thread holds the
    /// same value, so one copy answers instead of a sum.
    pub fn setting(mut self) -> Self {
        if let Some(e) = self.h.entries.last_mut() {
            e.spec.setting = true;
        }
        self
    }

    /// Reports the element's data structure through `footprint_bytes` and
    /// `accesses_per_packet` (one copy's, on every thread the same kind of structure).
    pub fn footprint(mut self, f: fn(&E) -> Footprint) -> Self {
        self.reader(FOOTPRINT_BYTES, move |e| f(e).bytes.to_string());
        self = self.setting();
        self.reader(ACCESSES_PER_PACKET, move |e| f(e).accesses.to_string());
        self.setting()
    }

    /// Binds the element's drop counters: adds `drops` (the total) and `drop_details` (one line
    /// per reason), and lists the element's drops in the router-wide `drops` handler. An
    /// element that declares its own `drops` or `drop_details` (where Click's count something
    /// else, such as bad packets sent to an error output) keeps them.
    pub fn drops<R: DropReason>(self, f: fn(&E) -> &Drops<R>) -> Self {
        self.drop_counts(move |e| f(e).counts().collect())
    }

    /// [`Table::drops`] for counts that are not a `Drops` field of the element (a table behind
    /// a lock): `f` gives each reason and its count.
    pub fn drop_counts(
        mut self,
        f: impl Fn(&E) -> Vec<(&'static str, u64)> + Clone + Send + Sync + 'static,
    ) -> Self {
        if self.h.entries.iter().all(|e| e.spec.name != DROPS) {
            let f = f.clone();
            self.reader(DROPS, move |e| {
                f(e).iter().map(|c| c.1).sum::<u64>().to_string()
            });
            self.h.auto_total = true;
        }
        if self.h.entries.iter().all(|e| e.spec.name != DROP_DETAILS) {
            let f = f.clone();
            self.reader(DROP_DETAILS, move |e| details(f(e)));
            self.h.auto_details = true;
        }
        self.h.drops = Some(Box::new(move |el| f(downcast_ref::<E>(el))));
        self
    }

    /// For an element that drops nothing itself but sends packets to outputs that may be
    /// unconnected: `drops` and `drop_details` show the packets the router dropped there.
    pub fn unconnected_drops(mut self) -> Self {
        if self.h.entries.iter().all(|e| e.spec.name != DROPS) {
            self.reader(DROPS, |_| "0".to_string());
            self.h.auto_total = true;
        }
        if self.h.entries.iter().all(|e| e.spec.name != DROP_DETAILS) {
            self.reader(DROP_DETAILS, |_| String::new());
            self.h.auto_details = true;
        }
        self.h.drops = Some(Box::new(|_| Vec::new()));
        self
    }

    /// Adds the handlers of a part of the element (a field of type `S` reached with `f`)
    /// whose table is `part`.
    pub fn nest<S: Any>(mut self, f: fn(&mut E) -> &mut S, part: Handlers) -> Self {
        for sub in part.entries {
            let e = self.entry(sub.spec.name);
            e.spec = sub.spec;
            e.read = sub.read.map(|r| {
                Reader::Mut(Box::new(move |el: &mut dyn Any, p: &str| {
                    let s: &mut dyn Any = f(downcast::<E>(el));
                    match &r {
                        Reader::Ref(r) => r(s, p),
                        Reader::Mut(r) => r(s, p),
                    }
                }) as Box<ReadMutFn>)
            });
            e.write = sub.write.map(|w| {
                Writer::Mut(Box::new(move |el: &mut dyn Any, v: &str, cx: &mut Cx| {
                    let s: &mut dyn Any = f(downcast::<E>(el));
                    match &w {
                        Writer::Mut(w) => w(s, v, cx),
                        Writer::Ref(w) => w(s, v, cx),
                    }
                }) as Box<WriteFn>)
            });
        }
        self
    }

    /// Adds the read handlers of a part of the element that reads through `&E` (the state a
    /// thread-safe form shares), reached with `f`; they read empty while the part is absent
    /// (an element not yet configured). The part's table must read and write through
    /// shared references only ([`Table::read`], [`Table::action_ref`]).
    pub fn nest_ref<S: Any>(mut self, f: fn(&E) -> Option<&S>, part: Handlers) -> Self {
        for sub in part.entries {
            let e = self.entry(sub.spec.name);
            e.spec = sub.spec;
            let exclusive = format!("nested handler '{}' needs exclusive access", e.spec.name);
            e.read = sub.read.map(|r| match r {
                Reader::Ref(r) => Reader::Ref(Box::new(move |el, p| {
                    f(downcast_ref::<E>(el)).map_or(Ok(String::new()), |s| r(s, p))
                })),
                Reader::Mut(_) => panic!("{exclusive}"),
            });
            e.write = sub.write.map(|w| match w {
                Writer::Ref(w) => Writer::Ref(Box::new(move |el, v, cx| {
                    f(downcast_ref::<E>(el)).map_or(Ok(()), |s| w(s, v, cx))
                })),
                Writer::Mut(_) => panic!("{exclusive}"),
            });
        }
        self
    }
}

/// A kind of drop reason: an enum with a name for each variant, declared with
/// [`drop_reasons!`](crate::drop_reasons).
pub trait DropReason: Copy + 'static {
    /// The reasons' names, in variant order.
    const NAMES: &'static [&'static str];
    /// The variant's position.
    fn index(self) -> usize;
}

/// Declares a drop-reason enum and its names:
///
/// ```ignore
/// drop_reasons! {
///     /// Why CheckIPHeader drops a packet.
///     pub enum Reason { TooShort => "too short", BadVersion => "bad IP version" }
/// }
/// ```
#[macro_export]
macro_rules! drop_reasons {
    ($(#[$m:meta])* $vis:vis enum $name:ident {
        $($(#[$vm:meta])* $var:ident => $text:literal),+ $(,)?
    }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name {
            $($(#[$vm])* $var),+
        }

        impl $crate::handlers::DropReason for $name {
            const NAMES: &'static [&'static str] = &[$($text),+];
            fn index(self) -> usize {
                self as usize
            }
        }
    };
}

/// Drop counters by reason, kept per thread (each copy of an element counts its own; the
/// router adds them up).
pub struct Drops<R> {
    counts: Box<[u64]>,
    _r: PhantomData<R>,
}

impl<R: DropReason> Default for Drops<R> {
    fn default() -> Self {
        Drops {
            counts: vec![0; R::NAMES.len()].into_boxed_slice(),
            _r: PhantomData,
        }
    }
}

impl<R: DropReason> Drops<R> {
    /// Counts one packet dropped for `r`.
    #[inline]
    pub fn count(&mut self, r: R) {
        self.counts[r.index()] += 1;
    }

    /// Counts `n` packets dropped for `r`.
    #[inline]
    pub fn add(&mut self, r: R, n: u64) {
        self.counts[r.index()] += n;
    }

    /// Packets dropped for `r`.
    pub fn get(&self, r: R) -> u64 {
        self.counts[r.index()]
    }

    /// Packets dropped for any reason.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Each reason's name and count, in declaration order.
    pub fn counts(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        R::NAMES.iter().copied().zip(self.counts.iter().copied())
    }

    /// Zeroes every counter.
    pub fn reset(&mut self) {
        self.counts.iter_mut().for_each(|c| *c = 0);
    }

    /// Moves the counts of `old` (the element being replaced by a hot swap) into these.
    pub fn take(&mut self, old: &mut Drops<R>) {
        for (c, o) in self.counts.iter_mut().zip(old.counts.iter_mut()) {
            *c += std::mem::take(o);
        }
    }

    /// The `drop_details` text: one `COUNT REASON` line per reason, counts right-aligned.
    pub fn details(&self) -> String {
        details(self.counts())
    }
}

/// Formats `(reason, count)` pairs as `drop_details` lines.
pub fn details<'a>(counts: impl IntoIterator<Item = (&'a str, u64)>) -> String {
    counts
        .into_iter()
        .map(|(n, c)| format!("{:>12} {}\n", c, n))
        .collect()
}

/// Parses `drop_details` text back into `(reason, count)` pairs.
pub fn parse_details(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .filter_map(|l| {
            let (c, n) = l.trim_start().split_once(' ')?;
            Some((n.to_string(), c.parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    drop_reasons! {
        enum Why { Short => "too short", Bad => "bad checksum" }
    }

    #[derive(Default)]
    struct Part {
        size: u32,
    }

    #[derive(Default)]
    struct El {
        active: bool,
        seen: u64,
        drops: Drops<Why>,
        part: Part,
    }

    fn table() -> Handlers {
        let part: Handlers = Table::<Part>::new().data("size", |p| &mut p.size).into();
        Table::<El>::new()
            .read("seen", |e| e.seen)
            .data("active", |e| &mut e.active)
            .read_param("echo", |_, p| Ok(p.to_uppercase()))
            .drops(|e| &e.drops)
            .nest(|e| &mut e.part, part)
            .into()
    }

    #[test]
    fn reads_and_data_handlers_reach_fields() {
        let t = table();
        let mut el = El {
            seen: 7,
            ..El::default()
        };
        assert_eq!(t.read(&mut el, "seen", "").unwrap().unwrap(), "7");
        assert_eq!(t.read(&mut el, "echo", "ab").unwrap().unwrap(), "AB");
        assert_eq!(t.read(&mut el, "size", "").unwrap().unwrap(), "0");
        assert!(t.read(&mut el, "nothing", "").is_none());
        let spec = t.spec("active").unwrap();
        assert!(spec.read && spec.write && spec.setting && !spec.param);
        assert!(t.spec("echo").unwrap().param);
        assert!(!t.spec("seen").unwrap().write);
    }

    #[test]
    fn drops_by_reason() {
        let t = table();
        let mut el = El::default();
        el.drops.count(Why::Bad);
        el.drops.add(Why::Short, 2);
        assert_eq!(t.read(&mut el, DROPS, "").unwrap().unwrap(), "3");
        let d = t.read(&mut el, DROP_DETAILS, "").unwrap().unwrap();
        assert_eq!(
            parse_details(&d),
            vec![
                ("too short".to_string(), 2),
                ("bad checksum".to_string(), 1)
            ]
        );
        assert_eq!(
            t.drop_counts(&el),
            vec![("too short", 2), ("bad checksum", 1)]
        );
        let mut fresh = Drops::<Why>::default();
        fresh.take(&mut el.drops);
        assert_eq!((fresh.total(), el.drops.total()), (3, 0));
    }

    #[test]
    fn an_own_drops_handler_is_kept() {
        let t: Handlers = Table::<El>::new()
            .read(DROPS, |e| e.seen)
            .drops(|e| &e.drops)
            .into();
        let mut el = El {
            seen: 9,
            ..El::default()
        };
        el.drops.count(Why::Short);
        assert_eq!(t.read(&mut el, DROPS, "").unwrap().unwrap(), "9");
        assert!(t.has_drops());
    }
}
