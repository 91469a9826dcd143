//! `LT012` control-character: a raw control character (such as a tab) inside a string.

use crate::declare_rule;

declare_rule! {
    /// A raw control character (such as a tab) inside a string.
    ///
    /// JSON requires control characters in strings to be escaped. The fix writes the escape.
    pub static CONTROL_CHARACTER = ("LT012", "control-character", Error);
}
