//! `LT004` unterminated-string: a string has no closing quote before the end of its line or of
//! the file.

use crate::declare_rule;

declare_rule! {
    /// A string has no closing quote before the end of its line or of the file.
    ///
    /// JSON strings cannot span lines. The parser ends the string at the line break and goes on,
    /// so later problems are still reported.
    ///
    /// ```json
    /// { "model_prompt": "Summarize this
    /// }
    /// ```
    pub static UNTERMINATED_STRING = ("LT004", "unterminated-string", Error);
}
