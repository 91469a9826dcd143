//! `LT010` unexpected-token: a token that cannot appear where it is.

use crate::declare_rule;

declare_rule! {
    /// A token that cannot appear where it is: a stray `:`, a bare word, a closing bracket of
    /// the wrong kind, or a character that starts no JSON token.
    ///
    /// ```json
    /// { "temperature": NaN }
    /// ```
    pub static UNEXPECTED_TOKEN = ("LT010", "unexpected-token", Error);
}
