//! Runs the parser over the fuzz seed corpus so CI exercises it without a fuzzing run.

use std::path::Path;

#[test]
fn parse_config_corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/parse_config");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("corpus directory") {
        let path = entry.unwrap().path();
        if !path.is_file() {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        n += 1;
        if let Ok(cfg) = sluice_lang::parse_config(text, &path.display().to_string(), &[]) {
            let flat = sluice_lang::unparse(&cfg);
            let again = sluice_lang::parse_config(&flat, "flat", &[]).unwrap_or_else(|e| {
                panic!(
                    "{}: unparse output does not re-parse: {e:?}",
                    path.display()
                )
            });
            assert_eq!(again.elements.len(), cfg.elements.len());
            assert_eq!(again.connections.len(), cfg.connections.len());
            let _ = sluice_lang::to_dot(&cfg);
        }
    }
    assert!(n >= 3, "corpus too small");
}

#[test]
fn corpus_examples_parse_as_expected() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/parse_config");
    for ok in [
        "trivial.click",
        "fromdump.click",
        "compound.click",
        "groups.click",
    ] {
        let text = std::fs::read_to_string(dir.join(ok)).unwrap();
        if let Err(e) = sluice_lang::parse_config(&text, ok, &[]) {
            panic!(
                "{ok}: {:?}",
                e.iter().map(|d| d.to_string()).collect::<Vec<_>>()
            );
        }
    }
    let text = std::fs::read_to_string(dir.join("errors.click")).unwrap();
    let errs = sluice_lang::parse_config(&text, "errors.click", &[]).unwrap_err();
    assert!(errs.len() >= 4, "{errs:?}");
}
