//! `LT014` invalid-number: a number that breaks JSON's number grammar.

use crate::declare_rule;

declare_rule! {
    /// A number that breaks JSON's number grammar: a leading `+`, `.` or zero, or a trailing `.`.
    ///
    /// The fix writes the JSON spelling (`.5` becomes `0.5`).
    pub static INVALID_NUMBER = ("LT014", "invalid-number", Error);
}
