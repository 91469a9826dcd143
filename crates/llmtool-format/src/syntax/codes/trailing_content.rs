//! `LT019` trailing-content: more content after the end of the top-level object.

use crate::declare_rule;

declare_rule! {
    /// More content after the end of the top-level object.
    ///
    /// Often two tools pasted into one file: give each its own file.
    pub static TRAILING_CONTENT = ("LT019", "trailing-content", Error);
}
