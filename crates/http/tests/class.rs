//! HTTPServer's class passes the element library's checks (its page names every handler,
//! every handler reads on an unconfigured element). Apart from the other tests: the check
//! silences panic messages while it runs.

#[test]
fn http_server_class_is_documented() {
    let mut lib = sluice_elements::library();
    lib.add(sluice_http::CLASSES);
    let (_, problems) = sluice_testkit::class_problems(&lib);
    let mine: Vec<_> = problems
        .iter()
        .filter(|p| p.starts_with("HTTPServer"))
        .collect();
    assert!(mine.is_empty(), "{mine:?}");
}
