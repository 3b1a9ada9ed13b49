//! Every registered element class is well formed and documented
//! ([`sluice_testkit::class_problems`]).

#[test]
fn every_class_is_well_formed_and_documented() {
    let (n, problems) = sluice_testkit::class_problems(&sluice_elements::library());
    assert!(n > 100, "only {n} classes registered");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
