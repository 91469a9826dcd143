//! `LT601` unknown-variable: a value was given for a variable the tool does not have.

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
