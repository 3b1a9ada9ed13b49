//! Classifiers: Classifier, IPClassifier, IPFilter. Patterns compile into one decision DAG
//! (`program`); the element files are thin.

use sluice_core::ElementClass;

pub mod classifier;
pub mod element;
pub mod fuzzing;
pub mod ip_classifier;
pub mod ip_filter;
pub mod ipexpr;
pub mod program;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[classifier::CLASS, ip_classifier::CLASS, ip_filter::CLASS];
