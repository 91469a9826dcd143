//! `LT017` unquoted-key: an object key without quotes, as JavaScript and JSON5 allow.

use crate::declare_rule;

declare_rule! {
    /// An object key without quotes, as JavaScript and JSON5 allow.
    ///
    /// ```json
    /// { model_prompt: "Hi" }
    /// ```
    pub static UNQUOTED_KEY = ("LT017", "unquoted-key", Error);
}
