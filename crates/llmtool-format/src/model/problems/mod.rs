//! The problems found while lowering the syntax tree into a tool (the wrong type, an unknown
//! key, a parameter written as a string...): each declared with its documentation, beside the
//! function that builds its diagnostic.

pub mod missing_model_prompt;
pub mod number_as_string;
pub mod unknown_key;
pub mod unknown_parameter;
pub mod unknown_variable_type;
pub mod wrong_type;
