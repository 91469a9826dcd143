//! `LT005` unexpected-end: the file ends before every `{` and `[` is closed.

use crate::declare_rule;

declare_rule! {
    /// The file ends before every `{` and `[` is closed.
    ///
    /// Usually a truncated download or an editor that saved half a file. The diagnostic names
    /// the bracket that is still open.
    ///
    /// ```json
    /// { "model_prompt": "Hi", "metadata": {
    /// ```
    pub static UNEXPECTED_END = ("LT005", "unexpected-end", Error);
}
