//! `LT805` unreachable-answer: an `equals` or `one_of` assertion expects an answer a limited
//! tool can never give.

use crate::declare_rule;

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
