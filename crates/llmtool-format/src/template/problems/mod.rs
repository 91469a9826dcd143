//! The codes of problems with the values given to a tool (`LT6xx`), reported all together by
//! [`ToolTemplate::resolve`](crate::template::ToolTemplate::resolve) before anything is rendered.

mod duplicate_value;
mod missing_value;
mod too_many_values;
mod unknown_variable;
mod value_not_allowed;

pub use duplicate_value::DUPLICATE_VALUE;
pub use missing_value::MISSING_VALUE;
pub use too_many_values::TOO_MANY_VALUES;
pub use unknown_variable::UNKNOWN_VARIABLE;
pub use value_not_allowed::VALUE_NOT_ALLOWED;
