//! Bodies of the `classifier` and `ipfilter` fuzz targets, also run over their seed corpus by
//! `tests/cls.rs`. Input: a configuration string, then optionally a NUL byte and packet bytes
//! that the compiled program classifies. Neither step may panic.

use sluice_lang::args::split_args;

fn split(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[]),
    }
}

/// Classifier: compile the patterns, classify the packet.
pub fn classifier(data: &[u8]) {
    let (conf, pkt) = split(data);
    let Ok(conf) = std::str::from_utf8(conf) else {
        return;
    };
    let pats = split_args(conf);
    if let Ok(p) = super::classifier::compile(&pats) {
        if let Some(o) = p.classify(pkt) {
            assert!((o as usize) < pats.len());
        }
        let _ = p.unparse(0);
    }
}

/// IPFilter and IPClassifier: compile the rules (as IPFilter with 4 outputs, and each rule's
/// pattern alone as IPClassifier), classify the packet.
pub fn ipfilter(data: &[u8]) {
    let (conf, pkt) = split(data);
    let Ok(conf) = std::str::from_utf8(conf) else {
        return;
    };
    let rules = split_args(conf);
    if let Ok(p) = super::ip_filter::compile(&rules, 4) {
        if let Some(o) = p.classify(pkt) {
            assert!(o < 4);
        }
    }
    if let Ok(p) = super::ip_classifier::compile(&rules) {
        if let Some(o) = p.classify(pkt) {
            assert!((o as usize) < rules.len());
        }
        let _ = p.unparse(0);
    }
}
