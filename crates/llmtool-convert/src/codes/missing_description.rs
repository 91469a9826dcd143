//! `LT706` missing-description: the tool has no description; the target's description is made
//! from its name.

use llmtool_format::declare_rule;

declare_rule! {
    /// The tool has no description; the target's description is made from its name.
    ///
    /// Models choose tools by their descriptions, so a tool without one is rarely called.
    pub static MISSING_DESCRIPTION = ("LT706", "missing-description", Warning);
}
