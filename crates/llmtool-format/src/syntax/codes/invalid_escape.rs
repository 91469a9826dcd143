//! `LT011` invalid-escape: a backslash escape that JSON does not define, or a malformed `\u`
//! escape.

use crate::declare_rule;

declare_rule! {
    /// A backslash escape that JSON does not define, or a malformed `\u` escape.
    ///
    /// Valid escapes are `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t` and `\uXXXX`. Windows
    /// paths are the usual cause: write `C:\\Users`, not `C:\Users`. The fix doubles the
    /// backslash.
    pub static INVALID_ESCAPE = ("LT011", "invalid-escape", Error);
}
