//! `LT804` case-variables: a case's `vars` do not fill the tool's prompt.

use crate::declare_rule;

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
