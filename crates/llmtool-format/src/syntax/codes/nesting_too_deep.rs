//! `LT009` nesting-too-deep: objects and arrays are nested deeper than 128 levels.

use crate::declare_rule;

declare_rule! {
    /// Objects and arrays are nested deeper than 128 levels.
    ///
    /// No field of the format nests anywhere near that deep, so such a file is garbage or an
    /// attack. The nested part is skipped (without recursion, so even 200,000 levels are safe)
    /// and the rest of the file is still checked.
    pub static NESTING_TOO_DEEP = ("LT009", "nesting-too-deep", Error);
}
