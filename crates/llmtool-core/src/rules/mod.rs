//! Every diagnostic code llmtool emits, and the semantic checks that run on a lowered tool.
//!
//! Each rule is declared in its own file with [`declare_rule!`](crate::declare_rule); its doc
//! comment is its documentation, from which `docs/diagnostics.md` is generated.

mod context;
mod declare;
mod docs;
pub mod metadata;
pub mod output;
pub mod parameters;
pub mod structure;
pub mod suggest;
pub mod values;
pub mod variables;

pub use context::Context;
pub use declare::Rule;
pub use docs::diagnostics_markdown;

use crate::diagnostic::Diagnostic;

type Check = fn(&Context<'_>, &mut Vec<Diagnostic>);

/// The checks that run on a lowered tool, in no particular order (output is sorted).
const CHECKS: &[Check] = &[
    structure::missing_metadata::check,
    structure::missing_recommended::check,
    structure::smart_tool::check,
    structure::empty_prompt::check,
    variables::empty_variable_name::check,
    variables::duplicate_variable_name::check,
    variables::braces_in_variable_name::check,
    variables::translated_variable_type::check,
    variables::missing_allowed_values::check,
    variables::duplicate_allowed_value::check,
    variables::default_not_allowed::check,
    variables::invalid_default::check,
    variables::allowed_values_on_text::check,
    variables::unused_variable::check,
    variables::undeclared_placeholder::check,
    variables::implicit_variables::check,
    variables::missing_variable_type::check,
    variables::missing_variable_description::check,
    parameters::out_of_range::check,
    output::unknown_output_type::check,
    output::limited_without_values::check,
    output::code_without_language::check,
    output::unknown_output_format::check,
    output::allowed_values_unused::check,
    metadata::invalid_timestamp::check,
    metadata::invalid_email::check,
    metadata::invalid_avatar_url::check,
    metadata::invalid_avatar_image::check,
    metadata::avatar_dimensions::check,
    metadata::avatar_too_large::check,
    metadata::unknown_avatar_type::check,
    metadata::incomplete_avatar::check,
];

/// Runs every semantic check on a lowered tool.
pub fn run_checks(cx: &Context<'_>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for check in CHECKS {
        check(cx, &mut out);
    }
    out
}

/// Every rule, in code order.
pub static ALL: &[&Rule] = &[
    &crate::syntax::codes::TRAILING_COMMA,
    &crate::syntax::codes::MISSING_COMMA,
    &crate::syntax::codes::COMMENT,
    &crate::syntax::codes::UNTERMINATED_STRING,
    &crate::syntax::codes::UNEXPECTED_END,
    &crate::syntax::codes::INVALID_UTF8,
    &crate::syntax::codes::EMPTY_INPUT,
    &crate::syntax::codes::NOT_AN_OBJECT,
    &crate::syntax::codes::NESTING_TOO_DEEP,
    &crate::syntax::codes::UNEXPECTED_TOKEN,
    &crate::syntax::codes::INVALID_ESCAPE,
    &crate::syntax::codes::CONTROL_CHARACTER,
    &crate::syntax::codes::DUPLICATE_KEY,
    &crate::syntax::codes::INVALID_NUMBER,
    &crate::syntax::codes::MISSING_COLON,
    &crate::syntax::codes::SINGLE_QUOTED_STRING,
    &crate::syntax::codes::UNQUOTED_KEY,
    &crate::syntax::codes::UNTERMINATED_COMMENT,
    &crate::syntax::codes::TRAILING_CONTENT,
    &structure::missing_model_prompt::MISSING_MODEL_PROMPT,
    &structure::wrong_type::WRONG_TYPE,
    &structure::unknown_key::UNKNOWN_KEY,
    &structure::missing_metadata::MISSING_METADATA,
    &structure::missing_recommended::MISSING_RECOMMENDED,
    &structure::smart_tool::SMART_TOOL,
    &structure::empty_prompt::EMPTY_PROMPT,
    &variables::empty_variable_name::EMPTY_VARIABLE_NAME,
    &variables::duplicate_variable_name::DUPLICATE_VARIABLE_NAME,
    &variables::braces_in_variable_name::BRACES_IN_VARIABLE_NAME,
    &variables::unknown_variable_type::UNKNOWN_VARIABLE_TYPE,
    &variables::translated_variable_type::TRANSLATED_VARIABLE_TYPE,
    &variables::missing_allowed_values::MISSING_ALLOWED_VALUES,
    &variables::duplicate_allowed_value::DUPLICATE_ALLOWED_VALUE,
    &variables::default_not_allowed::DEFAULT_NOT_ALLOWED,
    &variables::invalid_default::INVALID_DEFAULT,
    &variables::allowed_values_on_text::ALLOWED_VALUES_ON_TEXT,
    &variables::unused_variable::UNUSED_VARIABLE,
    &variables::undeclared_placeholder::UNDECLARED_PLACEHOLDER,
    &variables::implicit_variables::IMPLICIT_VARIABLES,
    &variables::missing_variable_type::MISSING_VARIABLE_TYPE,
    &variables::missing_variable_description::MISSING_VARIABLE_DESCRIPTION,
    &parameters::out_of_range::PARAMETER_OUT_OF_RANGE,
    &parameters::number_as_string::NUMBER_AS_STRING,
    &parameters::unknown_parameter::UNKNOWN_PARAMETER,
    &output::unknown_output_type::UNKNOWN_OUTPUT_TYPE,
    &output::limited_without_values::LIMITED_WITHOUT_VALUES,
    &output::code_without_language::CODE_WITHOUT_LANGUAGE,
    &output::unknown_output_format::UNKNOWN_OUTPUT_FORMAT,
    &output::allowed_values_unused::OUTPUT_VALUES_IGNORED,
    &metadata::invalid_timestamp::INVALID_TIMESTAMP,
    &metadata::invalid_email::INVALID_EMAIL,
    &metadata::invalid_avatar_url::INVALID_AVATAR_URL,
    &metadata::invalid_avatar_image::INVALID_AVATAR_IMAGE,
    &metadata::avatar_dimensions::AVATAR_DIMENSIONS,
    &metadata::avatar_too_large::AVATAR_TOO_LARGE,
    &metadata::unknown_avatar_type::UNKNOWN_AVATAR_TYPE,
    &metadata::incomplete_avatar::INCOMPLETE_AVATAR,
    &values::UNKNOWN_VARIABLE,
    &values::MISSING_VALUE,
    &values::VALUE_NOT_ALLOWED,
    &values::DUPLICATE_VALUE,
    &values::TOO_MANY_VALUES,
];
