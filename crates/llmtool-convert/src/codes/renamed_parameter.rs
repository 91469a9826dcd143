//! `LT702` renamed-parameter: a variable name is not accepted as a parameter name by the
//! target, so it is renamed.

use llmtool_format::declare_rule;

declare_rule! {
    /// A variable name is not accepted as a parameter name by the target, so it is renamed.
    ///
    /// Function-calling APIs take parameter names of ASCII letters, digits, `_`, `-` and `.`.
    /// The variable is exported under a snake_case name, with its own name kept as the
    /// parameter's `title`, which `import` reads back.
    pub static RENAMED_PARAMETER = ("LT702", "renamed-parameter", Warning);
}
