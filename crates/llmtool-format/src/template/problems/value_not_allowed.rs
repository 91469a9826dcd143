//! `LT603` value-not-allowed: a value of a select variable is not one of its `allowed_values`.

use crate::declare_rule;

declare_rule! {
    /// A value of a select variable is not one of its `allowed_values`.
    ///
    /// Matching is exact; the closest allowed value is suggested.
    ///
    /// ```sh
    /// llmtool render tool.json --var tone=Formal   # allowed: formal, casual
    /// ```
    pub static VALUE_NOT_ALLOWED = ("LT603", "value-not-allowed", Error);
}
