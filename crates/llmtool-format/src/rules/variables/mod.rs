//! Rules about `metadata.variables` and the placeholders of `model_prompt`.

pub mod allowed_values_on_text;
pub mod braces_in_variable_name;
pub mod default_not_allowed;
pub mod duplicate_allowed_value;
pub mod duplicate_variable_name;
pub mod empty_variable_name;
pub mod implicit_variables;
pub mod invalid_default;
pub mod missing_allowed_values;
pub mod missing_variable_description;
pub mod missing_variable_type;
pub mod translated_variable_type;
pub mod unclosed_placeholder;
pub mod undeclared_placeholder;
pub mod unused_variable;
