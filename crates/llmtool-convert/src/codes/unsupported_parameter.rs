//! `LT703` unsupported-parameter: a parameter of an imported function tool cannot become a
//! variable.

use llmtool_format::declare_rule;

declare_rule! {
    /// A parameter of an imported function tool cannot become a variable.
    ///
    /// Variables are text, one choice among strings, or several choices among strings. A
    /// number, a boolean, an object or a free array has no variable type: the parameter is
    /// listed in the generated prompt and named here with its path.
    pub static UNSUPPORTED_PARAMETER = ("LT703", "unsupported-parameter", Warning);
}
