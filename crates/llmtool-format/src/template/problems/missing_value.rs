//! `LT602` missing-value: a variable without a default was given no value.

use crate::declare_rule;

declare_rule! {
    /// A variable without a default was given no value.
    ///
    /// ```sh
    /// llmtool render tool.json   # the tool has a `topic` variable without default
    /// ```
    pub static MISSING_VALUE = ("LT602", "missing-value", Error);
}
