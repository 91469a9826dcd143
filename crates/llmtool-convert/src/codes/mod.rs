//! The diagnostics of `export`, `import` and `convert` (codes LT7xx), documented like the
//! format's rules, listed in [`ALL`] (and joined with the format's by [`crate::all_rules`]).

mod dropped_field;
mod invalid_source;
mod list_for_vector;
mod missing_description;
mod peer_renders_differently;
mod renamed_parameter;
mod rewritten_schema;
mod undeclared_input;
mod unsupported_parameter;

pub use dropped_field::DROPPED_FIELD;
pub use invalid_source::INVALID_SOURCE;
pub use list_for_vector::LIST_FOR_VECTOR;
pub use missing_description::MISSING_DESCRIPTION;
pub use peer_renders_differently::PEER_RENDERS_DIFFERENTLY;
pub use renamed_parameter::RENAMED_PARAMETER;
pub use rewritten_schema::REWRITTEN_SCHEMA;
pub use undeclared_input::UNDECLARED_INPUT;
pub use unsupported_parameter::UNSUPPORTED_PARAMETER;

use llmtool_format::rules::Rule;

/// Every conversion code, in code order.
pub static ALL: &[&Rule] = &[
    &DROPPED_FIELD,
    &RENAMED_PARAMETER,
    &UNSUPPORTED_PARAMETER,
    &INVALID_SOURCE,
    &REWRITTEN_SCHEMA,
    &MISSING_DESCRIPTION,
    &LIST_FOR_VECTOR,
    &PEER_RENDERS_DIFFERENTLY,
    &UNDECLARED_INPUT,
];
