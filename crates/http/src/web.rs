//! The live web view's files, served at `/` and every path outside the API: the page
//! (`web/index.html`, `web/app.js`, `web/style.css`) and the graph layout library that
//! `web/package.json` pins, all embedded at build time by `build.rs`.
//!
//! The page fetches `/api/graph` once, lays the graph out left to right, then polls
//! `/api/stats` every second: each element shows its packet rate and drops, is coloured by
//! its rate on a log scale (grey when idle) and outlined in red while it drops; clicking it
//! lists its handlers, with their values and a field for each write handler. A token in the
//! page address's fragment (`#token=TOKEN`) is sent as `Authorization: Bearer TOKEN`.

use std::borrow::Cow;

const HTML: &str = "text/html; charset=utf-8";
const JAVASCRIPT: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

macro_rules! embedded {
    ($name:literal) => {
        include_bytes!(concat!(env!("OUT_DIR"), "/web/", $name))
    };
}

/// Every file of the page: path, content type, bytes.
const FILES: &[(&str, &str, &[u8])] = &[
    ("/", HTML, embedded!("index.html")),
    ("/index.html", HTML, embedded!("index.html")),
    ("/app.js", JAVASCRIPT, embedded!("app.js")),
    ("/style.css", CSS, embedded!("style.css")),
    ("/dagre.min.js", JAVASCRIPT, embedded!("dagre.min.js")),
];

/// The file served at `path` (such as `/` or `/app.js`; a query string is ignored): its
/// content type and bytes; `None` if there is none.
pub fn asset(path: &str) -> Option<(&'static str, Cow<'static, [u8]>)> {
    let path = path.split(['?', '#']).next().unwrap_or_default();
    FILES
        .iter()
        .find(|(p, _, _)| *p == path)
        .map(|&(_, content_type, bytes)| (content_type, Cow::Borrowed(bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(path: &str) -> String {
        let (_, bytes) = asset(path).unwrap_or_else(|| panic!("{path} not served"));
        String::from_utf8(bytes.into_owned()).expect("UTF-8")
    }

    #[test]
    fn serves_the_page_at_the_root() {
        let (content_type, _) = asset("/").unwrap();
        assert_eq!(content_type, HTML);
        assert_eq!(text("/"), text("/index.html"));
        assert!(text("/?x=1").starts_with("<!DOCTYPE html>"));
    }

    #[test]
    fn every_file_the_page_loads_is_served_with_its_type() {
        let page = text("/");
        for (file, content_type) in [
            ("style.css", CSS),
            ("dagre.min.js", JAVASCRIPT),
            ("app.js", JAVASCRIPT),
        ] {
            assert!(
                page.contains(&format!("\"{file}\"")),
                "index.html does not load {file}"
            );
            assert_eq!(asset(&format!("/{file}")).unwrap().0, content_type);
        }
    }

    #[test]
    fn the_layout_library_or_its_stand_in_is_served() {
        let library = text("/dagre.min.js");
        assert!(
            library.contains("var dagre") || library.contains("SLUICE_LAYOUT_MISSING"),
            "neither the library nor the stand-in: {}",
            &library[..library.len().min(200)]
        );
        assert!(!library.contains("sourceMappingURL"));
        assert!(text("/app.js").contains("SLUICE_LAYOUT_MISSING"));
    }

    #[test]
    fn unknown_paths_are_not_served() {
        assert!(asset("/api/graph").is_none());
        assert!(asset("/node_modules/@dagrejs/dagre/package.json").is_none());
        assert!(asset("").is_none());
        assert!(asset("app.js").is_none());
    }
}
