//! The diagnostics of test files (`LT8xx`), emitted by [`super::read`] and [`super::check`].

mod case_variables;
mod invalid_assertion;
mod test_file_shape;
mod test_tool_missing;
mod unknown_assertion;
mod unreachable_answer;

pub use case_variables::CASE_VARIABLES;
pub use invalid_assertion::INVALID_ASSERTION;
pub use test_file_shape::TEST_FILE_SHAPE;
pub use test_tool_missing::TEST_TOOL_MISSING;
pub use unknown_assertion::UNKNOWN_ASSERTION;
pub use unreachable_answer::UNREACHABLE_ANSWER;
