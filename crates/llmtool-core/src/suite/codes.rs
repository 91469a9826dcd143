//! The diagnostics of test files (`LT8xx`), emitted by [`super::read`] and [`super::check`].

use crate::declare_rule;

declare_rule! {
    /// A test file's structure is wrong: not an object, no `cases` list, or a field of the
    /// wrong type.
    ///
    /// A test file is an object with a `cases` list; each case is an object with `vars` (an
    /// object) and `assert` (a list), and optionally `name` and `threshold`. The file may also
    /// name its `tool`, a `threshold` for every case and an `assert` list every case gets.
    ///
    /// ```json
    /// { "cases": { "vars": { "review": "Great" } } }
    /// ```
    pub static TEST_FILE_SHAPE = ("LT801", "test-file-shape", Error);
}

declare_rule! {
    /// An assertion's `type` is not one llmtool knows.
    ///
    /// The types are `equals`, `one_of`, `contains`, `not_contains`, `regex`, `starts_with`,
    /// `json`, `json_schema`, `json_path`, `max_length`, `max_tokens`, `max_cost`,
    /// `max_latency_ms`, `similar` and `judge`. A near miss gets a suggestion.
    ///
    /// ```json
    /// { "type": "contain", "value": "refund" }
    /// ```
    pub static UNKNOWN_ASSERTION = ("LT802", "unknown-assertion", Error);
}

declare_rule! {
    /// An assertion cannot be evaluated as written: its `value` is missing or of the wrong
    /// type, its regular expression or JSON Schema does not compile, its JSON path is not
    /// valid, or a weight or threshold is out of range.
    ///
    /// ```json
    /// { "type": "regex", "value": "([a-z]+" }
    /// ```
    pub static INVALID_ASSERTION = ("LT803", "invalid-assertion", Error);
}

declare_rule! {
    /// A case's `vars` do not fill the tool's prompt: a variable the tool does not have, a
    /// value missing with no default, or a value outside a select's allowed values.
    ///
    /// The case would fail before reaching a model, so it is reported when the file is
    /// checked.
    ///
    /// ```json
    /// { "vars": { "reveiw": "Great" }, "assert": [] }
    /// ```
    pub static CASE_VARIABLES = ("LT804", "case-variables", Error);
}

declare_rule! {
    /// An `equals` or `one_of` assertion expects an answer a limited tool can never give.
    ///
    /// A tool whose expected output is `limited` only ever answers one of its
    /// `allowed_values`; an assertion expecting anything else always fails.
    ///
    /// ```json
    /// { "type": "equals", "value": "Positive!" }
    /// ```
    pub static UNREACHABLE_ANSWER = ("LT805", "unreachable-answer", Warning);
}

declare_rule! {
    /// A test file's tool cannot be found or read.
    ///
    /// A test file names its tool with `tool` (a path relative to the test file); without
    /// it, `NAME.tests.json` tests the tool `NAME.json` beside it.
    pub static TEST_TOOL_MISSING = ("LT806", "test-tool-missing", Error);
}
