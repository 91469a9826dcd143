//! `LT006` invalid-utf8: bytes that are not valid UTF-8.

use crate::declare_rule;

declare_rule! {
    /// Bytes that are not valid UTF-8.
    ///
    /// JSON text is UTF-8. The offending bytes are shown as `?` in the rest of the report; the
    /// file was probably saved in a legacy encoding such as Latin-1 or UTF-16.
    pub static INVALID_UTF8 = ("LT006", "invalid-utf8", Error);
}
