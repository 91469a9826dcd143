//! `LT707` list-for-vector: an elisp list stands where gptel and llm.el need a vector.

use llmtool_format::declare_rule;

declare_rule! {
    /// An elisp list stands where gptel and llm.el need a vector.
    ///
    /// Both packages hand arrays to `json-serialize` as vectors (`["a" "b"]`); a list such as
    /// `("a" "b")` is taken for an object and the request fails. Import reads the list as an
    /// array anyway, and says where it is.
    pub static LIST_FOR_VECTOR = ("LT707", "list-for-vector", Warning);
}
