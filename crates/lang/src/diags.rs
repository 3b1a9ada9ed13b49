//! The errors of one configuration, collected up to a bound.

use crate::{Diagnostic, Landmark};

/// Errors reported one by one; past them a last error counts the rest. Each instance of a
/// faulty compound repeats its errors and each missing port of `x[700000]` has its own, so a
/// few kilobytes of configuration can otherwise make a million messages.
pub(crate) const MAX_DIAGNOSTICS: usize = 1000;

/// Errors collected while parsing and expanding a configuration.
#[derive(Default)]
pub(crate) struct Diags {
    list: Vec<Diagnostic>,
    /// Errors past [`MAX_DIAGNOSTICS`]: how many, and where the first was.
    unshown: usize,
    first_unshown: Option<Landmark>,
}

impl Diags {
    /// Records an error.
    pub(crate) fn push(&mut self, landmark: &Landmark, message: impl Into<String>) {
        if self.is_full() {
            self.skip(landmark, 1);
        } else {
            self.list.push(Diagnostic {
                landmark: landmark.clone(),
                message: message.into(),
            });
        }
    }

    /// True once further errors are only counted: callers may skip composing them and call
    /// [`Self::skip`] instead.
    pub(crate) fn is_full(&self) -> bool {
        self.list.len() >= MAX_DIAGNOSTICS
    }

    /// Counts `n` errors that are not shown.
    pub(crate) fn skip(&mut self, landmark: &Landmark, n: usize) {
        self.unshown += n;
        self.first_unshown.get_or_insert_with(|| landmark.clone());
    }

    /// Errors recorded so far, counted ones included.
    pub(crate) fn count(&self) -> usize {
        self.list.len() + self.unshown
    }

    /// Appends `other`'s errors.
    pub(crate) fn extend(&mut self, other: Diags) {
        for d in other.list {
            self.push(&d.landmark, d.message);
        }
        if let Some(lm) = other.first_unshown {
            self.skip(&lm, other.unshown);
        }
    }

    /// The errors, ending with `too many errors: N more not shown` when some were counted.
    pub(crate) fn into_vec(mut self) -> Vec<Diagnostic> {
        if let Some(landmark) = self.first_unshown {
            self.list.push(Diagnostic {
                landmark,
                message: format!("too many errors: {} more not shown", self.unshown),
            });
        }
        self.list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_past_the_bound_are_counted() {
        let lm = Landmark {
            file: "t.click".into(),
            line: 1,
        };
        let mut d = Diags::default();
        for i in 0..MAX_DIAGNOSTICS + 5 {
            d.push(&lm, format!("e{i}"));
        }
        let mut more = Diags::default();
        more.push(&lm, "late");
        d.extend(more);
        assert_eq!(d.count(), MAX_DIAGNOSTICS + 6);
        let v = d.into_vec();
        assert_eq!(v.len(), MAX_DIAGNOSTICS + 1);
        assert_eq!(
            v[MAX_DIAGNOSTICS - 1].message,
            format!("e{}", MAX_DIAGNOSTICS - 1)
        );
        assert_eq!(
            v[MAX_DIAGNOSTICS].message,
            "too many errors: 6 more not shown"
        );
    }
}
