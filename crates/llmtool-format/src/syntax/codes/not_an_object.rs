//! `LT008` not-an-object: the top-level value is not an object.

use crate::declare_rule;

declare_rule! {
    /// The top-level value is not an object.
    ///
    /// A tool file is one JSON object with at least `model_prompt`. An array of tools is not a
    /// tool file: split it into one file per tool.
    ///
    /// ```json
    /// ["Summarize {{text}}"]
    /// ```
    pub static NOT_AN_OBJECT = ("LT008", "not-an-object", Error);
}
