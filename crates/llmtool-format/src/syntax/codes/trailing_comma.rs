//! `LT001` trailing-comma: a comma follows the last member of an object or the last element of
//! an array.

use crate::declare_rule;

declare_rule! {
    /// A comma follows the last member of an object or the last element of an array.
    ///
    /// JSON allows no comma before `}` or `]`. The format's own published example has one (after
    /// the first variable's `default`), so files copied from it usually carry the slip.
    /// `llmtool fmt --fix` deletes the comma.
    ///
    /// ```json
    /// { "name": "topic", "default": "cats", }
    /// ```
    pub static TRAILING_COMMA = ("LT001", "trailing-comma", Error);
}
