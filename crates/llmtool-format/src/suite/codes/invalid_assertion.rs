//! `LT803` invalid-assertion: an assertion cannot be evaluated as written.

use crate::declare_rule;

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
