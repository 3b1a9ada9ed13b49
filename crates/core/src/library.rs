//! The library of element classes known to a router.

use std::collections::BTreeMap;

use crate::element::ElementClass;

/// Element classes by name.
#[derive(Clone, Debug, Default)]
pub struct Library {
    classes: BTreeMap<&'static str, ElementClass>,
}

impl Library {
    /// An empty library.
    pub fn new() -> Library {
        Library::default()
    }

    /// Adds classes; a later class of the same name replaces an earlier one.
    pub fn add(&mut self, classes: &[ElementClass]) {
        for c in classes {
            self.classes.insert(c.name, *c);
        }
    }

    /// The class called `name`.
    pub fn get(&self, name: &str) -> Option<&ElementClass> {
        self.classes.get(name)
    }

    /// All classes in name order.
    pub fn classes(&self) -> impl Iterator<Item = &ElementClass> {
        self.classes.values()
    }
}
