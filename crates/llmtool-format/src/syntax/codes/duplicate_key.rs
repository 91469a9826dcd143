//! `LT013` duplicate-key: the same key appears twice in one object.

use crate::declare_rule;

declare_rule! {
    /// The same key appears twice in one object.
    ///
    /// JSON readers disagree on which copy wins, so the file means different things to
    /// different programs. llmtool uses the last copy; remove one of them.
    ///
    /// ```json
    /// { "model_prompt": "A", "model_prompt": "B" }
    /// ```
    pub static DUPLICATE_KEY = ("LT013", "duplicate-key", Error);
}
