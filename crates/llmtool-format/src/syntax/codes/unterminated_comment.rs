//! `LT018` unterminated-comment: a `/*` comment that is never closed with `*/`.

use crate::declare_rule;

declare_rule! {
    /// A `/*` comment that is never closed with `*/`.
    pub static UNTERMINATED_COMMENT = ("LT018", "unterminated-comment", Error);
}
