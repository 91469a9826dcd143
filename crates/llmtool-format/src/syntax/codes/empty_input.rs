//! `LT007` empty-input: the file is empty, or holds only whitespace and comments.

use crate::declare_rule;

declare_rule! {
    /// The file is empty, or holds only whitespace and comments.
    pub static EMPTY_INPUT = ("LT007", "empty-input", Error);
}
