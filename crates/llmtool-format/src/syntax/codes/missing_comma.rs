//! `LT002` missing-comma: two members of an object, or two elements of an array, have no comma
//! between them.

use crate::declare_rule;

declare_rule! {
    /// Two members of an object, or two elements of an array, have no comma between them.
    ///
    /// The published example of the format lacks the comma after the multi-select variable's
    /// `default` array. The diagnostic points just after the value that needs the comma;
    /// `llmtool fmt --fix` inserts it.
    ///
    /// ```json
    /// "default": ["value1", "value2"]
    /// "allowed_values": ["value1", "value2", "value3"]
    /// ```
    pub static MISSING_COMMA = ("LT002", "missing-comma", Error);
}
