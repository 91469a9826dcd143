//! Every diagnostic code llmtool emits, and the semantic checks that run on a lowered tool.
//!
//! Each rule is declared with [`declare_rule!`](crate::declare_rule) beside the code that
//! emits it (a check here, or the parser, the lowering, rendering or conversion); its doc
//! comment is its documentation, from which `docs/diagnostics.md` is generated. The registry
//! below lists every rule of the format once; the conversions list theirs in `llmtool-convert`. Nothing else in core depends on this module but `Document`,
//! which runs the checks.

mod context;
mod docs;
pub mod metadata;
pub mod names;
pub mod output;
pub mod parameters;
pub mod selection;
pub mod smart;
pub mod structure;
pub mod variables;

pub use context::Context;
pub use docs::{code_table, diagnostics_markdown};

pub use crate::diagnostic::Rule;

use crate::diagnostic::Diagnostic;

type Check = fn(&Context<'_>, &mut Vec<Diagnostic>);

/// Declares every rule once, in code order: `RULE` alone for a code emitted elsewhere (the
/// parser, the lowering, rendering, conversion), `RULE => check` for a semantic check run on
/// every lowered tool. From this one list come [`ALL`] (every code of the format, documented
/// in `docs/diagnostics.md` with the conversions' codes, which `llmtool-convert` lists) and
/// the checks [`run_checks`] runs.
macro_rules! registry {
    ($($rule:path $(=> $check:path)?),* $(,)?) => {
        /// Every rule of the format, in code order (the conversions' LT7xx are
        /// `llmtool_convert::codes::ALL`; `llmtool_convert::all_rules` joins both).
        pub static ALL: &[&Rule] = &[$(&$rule),*];

        /// The checks that run on a lowered tool (their output is sorted afterwards).
        const CHECKS: &[Check] = &[$($($check,)?)*];
    };
}

registry! {
    crate::syntax::codes::TRAILING_COMMA,
    crate::syntax::codes::MISSING_COMMA,
    crate::syntax::codes::COMMENT,
    crate::syntax::codes::UNTERMINATED_STRING,
    crate::syntax::codes::UNEXPECTED_END,
    crate::syntax::codes::INVALID_UTF8,
    crate::syntax::codes::EMPTY_INPUT,
    crate::syntax::codes::NOT_AN_OBJECT,
    crate::syntax::codes::NESTING_TOO_DEEP,
    crate::syntax::codes::UNEXPECTED_TOKEN,
    crate::syntax::codes::INVALID_ESCAPE,
    crate::syntax::codes::CONTROL_CHARACTER,
    crate::syntax::codes::DUPLICATE_KEY,
    crate::syntax::codes::INVALID_NUMBER,
    crate::syntax::codes::MISSING_COLON,
    crate::syntax::codes::SINGLE_QUOTED_STRING,
    crate::syntax::codes::UNQUOTED_KEY,
    crate::syntax::codes::UNTERMINATED_COMMENT,
    crate::syntax::codes::TRAILING_CONTENT,
    crate::model::problems::missing_model_prompt::MISSING_MODEL_PROMPT,
    crate::model::problems::wrong_type::WRONG_TYPE,
    crate::model::problems::unknown_key::UNKNOWN_KEY,
    structure::missing_metadata::MISSING_METADATA => structure::missing_metadata::check,
    structure::missing_recommended::MISSING_RECOMMENDED => structure::missing_recommended::check,
    structure::smart_tool::SMART_TOOL => structure::smart_tool::check,
    structure::empty_prompt::EMPTY_PROMPT => structure::empty_prompt::check,
    structure::unknown_dlp_policy::UNKNOWN_DLP_POLICY => structure::unknown_dlp_policy::check,
    structure::chat_tool_turn::CHAT_TOOL_TURN => structure::chat_tool_turn::check,
    structure::unmarked_chat::UNMARKED_CHAT => structure::unmarked_chat::check,
    structure::chat_without_role_lines::CHAT_WITHOUT_ROLE_LINES => structure::chat_without_role_lines::check,
    structure::text_before_first_turn::TEXT_BEFORE_FIRST_TURN => structure::text_before_first_turn::check,
    structure::unknown_builtin_function::UNKNOWN_BUILTIN_FUNCTION => structure::unknown_builtin_function::check,
    structure::invalid_function_entry::INVALID_FUNCTION_ENTRY => structure::invalid_function_entry::check,
    structure::duplicate_function::DUPLICATE_FUNCTION => structure::duplicate_function::check,
    variables::empty_variable_name::EMPTY_VARIABLE_NAME => variables::empty_variable_name::check,
    variables::duplicate_variable_name::DUPLICATE_VARIABLE_NAME => variables::duplicate_variable_name::check,
    variables::braces_in_variable_name::BRACES_IN_VARIABLE_NAME => variables::braces_in_variable_name::check,
    crate::model::problems::unknown_variable_type::UNKNOWN_VARIABLE_TYPE,
    variables::translated_variable_type::TRANSLATED_VARIABLE_TYPE => variables::translated_variable_type::check,
    variables::missing_allowed_values::MISSING_ALLOWED_VALUES => variables::missing_allowed_values::check,
    variables::duplicate_allowed_value::DUPLICATE_ALLOWED_VALUE => variables::duplicate_allowed_value::check,
    variables::default_not_allowed::DEFAULT_NOT_ALLOWED => variables::default_not_allowed::check,
    variables::invalid_default::INVALID_DEFAULT => variables::invalid_default::check,
    variables::allowed_values_on_text::ALLOWED_VALUES_ON_TEXT => variables::allowed_values_on_text::check,
    variables::unused_variable::UNUSED_VARIABLE => variables::unused_variable::check,
    variables::undeclared_placeholder::UNDECLARED_PLACEHOLDER => variables::undeclared_placeholder::check,
    variables::implicit_variables::IMPLICIT_VARIABLES => variables::implicit_variables::check,
    variables::missing_variable_type::MISSING_VARIABLE_TYPE => variables::missing_variable_type::check,
    variables::missing_variable_description::MISSING_VARIABLE_DESCRIPTION => variables::missing_variable_description::check,
    variables::unclosed_placeholder::UNCLOSED_PLACEHOLDER => variables::unclosed_placeholder::check,
    parameters::out_of_range::PARAMETER_OUT_OF_RANGE => parameters::out_of_range::check,
    crate::model::problems::number_as_string::NUMBER_AS_STRING,
    crate::model::problems::unknown_parameter::UNKNOWN_PARAMETER,
    parameters::text_parameter_on_image_tool::TEXT_PARAMETER_ON_IMAGE_TOOL => parameters::text_parameter_on_image_tool::check,
    parameters::invalid_image_parameter::INVALID_IMAGE_PARAMETER => parameters::invalid_image_parameter::check,
    output::unknown_output_type::UNKNOWN_OUTPUT_TYPE => output::unknown_output_type::check,
    output::limited_without_values::LIMITED_WITHOUT_VALUES => output::limited_without_values::check,
    output::code_without_language::CODE_WITHOUT_LANGUAGE => output::code_without_language::check,
    output::unknown_output_format::UNKNOWN_OUTPUT_FORMAT => output::unknown_output_format::check,
    output::allowed_values_unused::OUTPUT_VALUES_IGNORED => output::allowed_values_unused::check,
    output::invalid_image_output::INVALID_IMAGE_OUTPUT => output::invalid_image_output::check,
    output::image_field_on_text_tool::IMAGE_FIELD_ON_TEXT_TOOL => output::image_field_on_text_tool::check,
    metadata::invalid_timestamp::INVALID_TIMESTAMP => metadata::invalid_timestamp::check,
    metadata::invalid_email::INVALID_EMAIL => metadata::invalid_email::check,
    metadata::invalid_avatar_url::INVALID_AVATAR_URL => metadata::invalid_avatar_url::check,
    metadata::invalid_avatar_image::INVALID_AVATAR_IMAGE => metadata::invalid_avatar_image::check,
    metadata::avatar_dimensions::AVATAR_DIMENSIONS => metadata::avatar_dimensions::check,
    metadata::avatar_too_large::AVATAR_TOO_LARGE => metadata::avatar_too_large::check,
    metadata::unknown_avatar_type::UNKNOWN_AVATAR_TYPE => metadata::unknown_avatar_type::check,
    metadata::incomplete_avatar::INCOMPLETE_AVATAR => metadata::incomplete_avatar::check,
    crate::template::problems::UNKNOWN_VARIABLE,
    crate::template::problems::MISSING_VALUE,
    crate::template::problems::VALUE_NOT_ALLOWED,
    crate::template::problems::DUPLICATE_VALUE,
    crate::template::problems::TOO_MANY_VALUES,
    crate::suite::codes::TEST_FILE_SHAPE,
    crate::suite::codes::UNKNOWN_ASSERTION,
    crate::suite::codes::INVALID_ASSERTION,
    crate::suite::codes::CASE_VARIABLES,
    crate::suite::codes::UNREACHABLE_ANSWER,
    crate::suite::codes::TEST_TOOL_MISSING,
    smart::python_syntax_error::PYTHON_SYNTAX_ERROR => smart::python_syntax_error::check,
    smart::newer_python_syntax::NEWER_PYTHON_SYNTAX => smart::newer_python_syntax::check,
    smart::missing_execute::MISSING_EXECUTE => smart::missing_execute::check,
    smart::execute_signature::EXECUTE_SIGNATURE => smart::execute_signature::check,
    smart::invalid_requirement::INVALID_REQUIREMENT => smart::invalid_requirement::check,
    smart::unpinned_requirement::UNPINNED_REQUIREMENT => smart::unpinned_requirement::check,
    smart::variable_unused_by_code::VARIABLE_UNUSED_BY_CODE => smart::variable_unused_by_code::check,
    smart::undeclared_variable_read::UNDECLARED_VARIABLE_READ => smart::undeclared_variable_read::check,
    smart::tool_code_twice::TOOL_CODE_TWICE => smart::tool_code_twice::check,
}

/// Runs every semantic check on a lowered tool.
pub fn run_checks(cx: &Context<'_>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for check in CHECKS {
        check(cx, &mut out);
    }
    out
}
