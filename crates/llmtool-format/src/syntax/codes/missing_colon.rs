//! `LT015` missing-colon: a key is not followed by `:`.

use crate::declare_rule;

declare_rule! {
    /// A key is not followed by `:`.
    ///
    /// ```json
    /// { "model_prompt" "Hi" }
    /// ```
    pub static MISSING_COLON = ("LT015", "missing-colon", Error);
}
