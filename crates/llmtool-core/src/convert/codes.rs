//! The diagnostics of `export`, `import` and `convert` (codes LT7xx), documented like the
//! check rules (and listed in `rules::ALL`).

use crate::declare_rule;

declare_rule! {
    /// A field of the source has no place in the target format, so the conversion leaves it out.
    ///
    /// Function-tool targets carry a name, a description and the parameters; the prompt, the
    /// model parameters and the expected output stay in the tool file. Read the other way, an
    /// elisp form's `:async` or `:category` has no place in a tool file. The warning names each
    /// field left out, so that nothing is lost without a word.
    pub static DROPPED_FIELD = ("LT701", "dropped-field", Warning);
}

declare_rule! {
    /// A variable name is not accepted as a parameter name by the target, so it is renamed.
    ///
    /// Function-calling APIs take parameter names of ASCII letters, digits, `_`, `-` and `.`.
    /// The variable is exported under a snake_case name, with its own name kept as the
    /// parameter's `title`, which `import` reads back.
    pub static RENAMED_PARAMETER = ("LT702", "renamed-parameter", Warning);
}

declare_rule! {
    /// A parameter of an imported function tool cannot become a variable.
    ///
    /// Variables are text, one choice among strings, or several choices among strings. A
    /// number, a boolean, an object or a free array has no variable type: the parameter is
    /// listed in the generated prompt and named here with its path.
    pub static UNSUPPORTED_PARAMETER = ("LT703", "unsupported-parameter", Warning);
}

declare_rule! {
    /// The input is not a tool in the format named (or in any known format).
    pub static INVALID_SOURCE = ("LT704", "invalid-source", Error);
}

declare_rule! {
    /// A schema keyword the target does not accept was rewritten or left out.
    ///
    /// For example, Gemini's schema subset has no `uniqueItems`, and OpenAI's strict mode has
    /// no `default`: the default is then stated in the description instead.
    pub static REWRITTEN_SCHEMA = ("LT705", "rewritten-schema", Warning);
}

declare_rule! {
    /// The tool has no description; the target's description is made from its name.
    ///
    /// Models choose tools by their descriptions, so a tool without one is rarely called.
    pub static MISSING_DESCRIPTION = ("LT706", "missing-description", Warning);
}

declare_rule! {
    /// An elisp list stands where gptel and llm.el need a vector.
    ///
    /// Both packages hand arrays to `json-serialize` as vectors (`["a" "b"]`); a list such as
    /// `("a" "b")` is taken for an object and the request fails. Import reads the list as an
    /// array anyway, and says where it is.
    pub static LIST_FOR_VECTOR = ("LT707", "list-for-vector", Warning);
}

declare_rule! {
    /// The target renders this prompt differently from `llmtool render`.
    ///
    /// Some peers change a prompt as they read it: Prompty splits messages at lines such as
    /// `system:` and trims the newlines around each message, for example. The export is still
    /// written; the warning says what the peer will do.
    pub static PEER_RENDERS_DIFFERENTLY = ("LT708", "peer-renders-differently", Warning);
}
