//! `LT704` invalid-source: the input is not a tool in the format named (or in any known format).

use llmtool_format::declare_rule;

declare_rule! {
    /// The input is not a tool in the format named (or in any known format).
    pub static INVALID_SOURCE = ("LT704", "invalid-source", Error);
}
