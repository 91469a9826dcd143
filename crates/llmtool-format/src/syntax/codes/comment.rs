//! `LT003` comment: a `//` or `/* */` comment.

use crate::declare_rule;

declare_rule! {
    /// A `//` or `/* */` comment.
    ///
    /// Comments are accepted so that hand-edited files still load, but plain JSON readers (every
    /// other program that takes the format) reject them. `llmtool fmt --fix` removes them; keep
    /// notes in `metadata.usage_notes` or an `x-` key instead.
    ///
    /// ```json
    /// { "model_prompt": "Hi" // greeting
    /// }
    /// ```
    pub static COMMENT = ("LT003", "comment", Warning);
}
