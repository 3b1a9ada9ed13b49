//! Every registered element class is well formed: its port count, processing and flow codes
//! parse, its documentation (`sluice doc CLASS`) has a title and Synopsis, Ports, Arguments
//! and Handlers sections and names the class, and every handler an unconfigured instance
//! declares is named in it (or in the page it refers to with `sluice doc OTHER`; `activeN`
//! covers `active0`...) and reads without error on that instance.

use sluice_core::ports::{FlowCode, PortCount, ProcessingSpec};

#[test]
fn every_class_is_well_formed_and_documented() {
    let lib = sluice_elements::library();
    let mut problems = Vec::new();
    let mut n = 0;
    // Panics while reading are reported as problems below, without their messages.
    std::panic::set_hook(Box::new(|_| {}));
    for c in lib.classes() {
        n += 1;
        let mut bad = |what: String| problems.push(format!("{}: {what}", c.name));
        if PortCount::parse(c.ports).is_none() {
            bad(format!("bad port count {:?}", c.ports));
        }
        if ProcessingSpec::parse(c.processing).is_none() {
            bad(format!("bad processing code {:?}", c.processing));
        }
        if FlowCode::parse(c.flow).is_none() {
            bad(format!("bad flow code {:?}", c.flow));
        }
        let mut doc = c.doc();
        let title = doc.lines().next().unwrap_or("").to_string();
        if !title.contains(" — ") || !doc.contains(c.name) {
            bad(format!(
                "doc title {title:?} is not 'NAME — what it does' or omits the class"
            ));
        }
        let refs: Vec<String> = doc
            .replace('\n', " ")
            .split("sluice doc ")
            .skip(1)
            .filter_map(|r| r.split(|ch: char| !ch.is_alphanumeric()).next())
            .filter_map(|r| lib.get(r))
            .map(|o| o.doc())
            .collect();
        for r in refs {
            doc.push_str(&r);
        }
        for section in ["Synopsis:", "Ports:", "Arguments:", "Handlers:"] {
            if !doc.contains(section) {
                bad(format!("doc has no {section} section"));
            }
        }
        let mut el = (c.make)();
        let table = el.handler_table();
        let specs: Vec<_> = table.specs().copied().collect();
        for h in specs {
            let numbered = h.name.trim_end_matches(|ch: char| ch.is_ascii_digit());
            let named = [
                format!("`{}`", h.name),
                format!("`{} ", h.name),
                format!("`{numbered}N`"),
            ];
            if !named.iter().any(|n| doc.contains(n.as_str())) {
                bad(format!("handler `{}` is not documented", h.name));
            }
            if h.read && !h.param {
                let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    table.read(el.as_any_mut(), h.name, "")
                }));
                match read {
                    Ok(Some(Ok(_))) => {}
                    Ok(other) => bad(format!("handler `{}` does not read: {other:?}", h.name)),
                    Err(_) => bad(format!("handler `{}` panics when read", h.name)),
                }
            }
        }
    }
    drop(std::panic::take_hook());
    assert!(n > 100, "only {n} classes registered");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
