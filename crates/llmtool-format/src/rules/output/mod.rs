//! Rules about `metadata.expected_output`.

pub mod allowed_values_unused;
pub mod code_without_language;
pub mod image_field_on_text_tool;
pub mod invalid_image_output;
pub mod limited_without_values;
pub mod unknown_output_format;
pub mod unknown_output_type;
