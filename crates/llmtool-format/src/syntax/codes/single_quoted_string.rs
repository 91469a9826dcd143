//! `LT016` single-quoted-string: a string in single quotes.

use crate::declare_rule;

declare_rule! {
    /// A string in single quotes.
    ///
    /// JSON strings use double quotes. The fix rewrites the string with double quotes.
    pub static SINGLE_QUOTED_STRING = ("LT016", "single-quoted-string", Error);
}
