//! `LT701` dropped-field: a field of the source has no place in the target format, so the
//! conversion leaves it out.

use llmtool_format::declare_rule;

declare_rule! {
    /// A field of the source has no place in the target format, so the conversion leaves it out.
    ///
    /// Function-tool targets carry a name, a description and the parameters; the prompt, the
    /// model parameters and the expected output stay in the tool file. Read the other way, an
    /// elisp form's `:async` or `:category` has no place in a tool file. The warning names each
    /// field left out, so that nothing is lost without a word.
    pub static DROPPED_FIELD = ("LT701", "dropped-field", Warning);
}
