//! `LT802` unknown-assertion: an assertion's `type` is not one llmtool knows.

use crate::declare_rule;

declare_rule! {
    /// An assertion's `type` is not one llmtool knows.
    ///
    /// The types are `equals`, `one_of`, `contains`, `not_contains`, `regex`, `starts_with`,
    /// `json`, `json_schema`, `json_path`, `max_length`, `max_tokens`, `max_cost`,
    /// `max_latency_ms`, `similar`, `judge`, and for image tools `image_size` and
    /// `image_format`. A near miss gets a suggestion.
    ///
    /// ```json
    /// { "type": "contain", "value": "refund" }
    /// ```
    pub static UNKNOWN_ASSERTION = ("LT802", "unknown-assertion", Error);
}
