//! `LT709` undeclared-input: the source's template uses a value that its inputs do not declare.

use llmtool_format::declare_rule;

declare_rule! {
    /// The source's template uses a value that its inputs do not declare.
    ///
    /// Jinja and Handlebars render a value they are not given as nothing, so a Prompty or
    /// Dotprompt file may use `{{name}}` without declaring `name`. The imported tool declares
    /// it as a text variable whose default is empty (or the source's default), so that it
    /// renders as the source does and every placeholder of the source is a placeholder of the
    /// tool. A path into an object (`{{user.name}}`) is a text variable of its own, named by
    /// the path, required when the source declares the object.
    /// Declare the input in the source, or give the variable a description and drop the
    /// default to make it required.
    pub static UNDECLARED_INPUT = ("LT709", "undeclared-input", Warning);
}
