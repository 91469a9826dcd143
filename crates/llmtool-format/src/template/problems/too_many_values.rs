//! `LT605` too-many-values: several values (or a list) were given for a `text` or
//! `single-select` variable, which takes exactly one.

use crate::declare_rule;

declare_rule! {
    /// Several values (or a list) were given for a `text` or `single-select` variable, which
    /// takes exactly one.
    ///
    /// ```sh
    /// llmtool render tool.json --var topic=cats --var topic=dogs
    /// ```
    pub static TOO_MANY_VALUES = ("LT605", "too-many-values", Error);
}
