//! The diagnostic codes of the parser (`LT0xx`): everything that makes a file not plain JSON.

mod comment;
mod control_character;
mod duplicate_key;
mod empty_input;
mod invalid_escape;
mod invalid_number;
mod invalid_utf8;
mod missing_colon;
mod missing_comma;
mod nesting_too_deep;
mod not_an_object;
mod single_quoted_string;
mod trailing_comma;
mod trailing_content;
mod unexpected_end;
mod unexpected_token;
mod unquoted_key;
mod unterminated_comment;
mod unterminated_string;

pub use comment::COMMENT;
pub use control_character::CONTROL_CHARACTER;
pub use duplicate_key::DUPLICATE_KEY;
pub use empty_input::EMPTY_INPUT;
pub use invalid_escape::INVALID_ESCAPE;
pub use invalid_number::INVALID_NUMBER;
pub use invalid_utf8::INVALID_UTF8;
pub use missing_colon::MISSING_COLON;
pub use missing_comma::MISSING_COMMA;
pub use nesting_too_deep::NESTING_TOO_DEEP;
pub use not_an_object::NOT_AN_OBJECT;
pub use single_quoted_string::SINGLE_QUOTED_STRING;
pub use trailing_comma::TRAILING_COMMA;
pub use trailing_content::TRAILING_CONTENT;
pub use unexpected_end::UNEXPECTED_END;
pub use unexpected_token::UNEXPECTED_TOKEN;
pub use unquoted_key::UNQUOTED_KEY;
pub use unterminated_comment::UNTERMINATED_COMMENT;
pub use unterminated_string::UNTERMINATED_STRING;

/// Whether `rule` is one of the parser's codes (`LT0xx`).
pub fn is_syntax(rule: &crate::diagnostic::Rule) -> bool {
    rule.code.starts_with("LT0")
}
