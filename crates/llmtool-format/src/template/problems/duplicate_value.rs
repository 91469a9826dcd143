//! `LT604` duplicate-value: the same item was given twice for a multi-select variable.

use crate::declare_rule;

declare_rule! {
    /// The same item was given twice for a multi-select variable.
    ///
    /// ```sh
    /// llmtool render tool.json --var tags=news --var tags=news
    /// ```
    pub static DUPLICATE_VALUE = ("LT604", "duplicate-value", Error);
}
