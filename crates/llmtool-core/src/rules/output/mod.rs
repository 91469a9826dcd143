//! Rules about `metadata.expected_output`.

pub mod allowed_values_unused;
pub mod code_without_language;
pub mod limited_without_values;
pub mod unknown_output_format;
pub mod unknown_output_type;
