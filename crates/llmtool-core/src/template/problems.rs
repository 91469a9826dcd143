//! The codes of problems with the values given to a tool (`LT6xx`), reported all together by
//! [`ToolTemplate::resolve`](crate::template::ToolTemplate::resolve) before anything is rendered.

use crate::declare_rule;

declare_rule! {
    /// A value was given for a variable the tool does not have.
    ///
    /// Usually a misspelled name; the closest variable is suggested.
    ///
    /// ```sh
    /// llmtool render tool.json --var topik=cats
    /// ```
    pub static UNKNOWN_VARIABLE = ("LT601", "unknown-variable", Error);
}

declare_rule! {
    /// A variable without a default was given no value.
    ///
    /// ```sh
    /// llmtool render tool.json   # the tool has a `topic` variable without default
    /// ```
    pub static MISSING_VALUE = ("LT602", "missing-value", Error);
}

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

declare_rule! {
    /// The same item was given twice for a multi-select variable.
    ///
    /// ```sh
    /// llmtool render tool.json --var tags=news --var tags=news
    /// ```
    pub static DUPLICATE_VALUE = ("LT604", "duplicate-value", Error);
}

declare_rule! {
    /// Several values (or a list) were given for a `text` or `single-select` variable, which
    /// takes exactly one.
    ///
    /// ```sh
    /// llmtool render tool.json --var topic=cats --var topic=dogs
    /// ```
    pub static TOO_MANY_VALUES = ("LT605", "too-many-values", Error);
}
