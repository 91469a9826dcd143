//! `LT705` rewritten-schema: a schema keyword the target does not accept was rewritten or left out.

use llmtool_format::declare_rule;

declare_rule! {
    /// A schema keyword the target does not accept was rewritten or left out.
    ///
    /// For example, Gemini's schema subset has no `uniqueItems`, and OpenAI's strict mode has
    /// no `default`: the default is then stated in the description instead.
    pub static REWRITTEN_SCHEMA = ("LT705", "rewritten-schema", Warning);
}
