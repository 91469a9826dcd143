//! Rules about smart tools: their Python code (syntax, `execute`, the variables it reads) and
//! their `requirements`.

pub mod execute_signature;
pub mod invalid_requirement;
pub mod missing_execute;
pub mod newer_python_syntax;
pub mod python_syntax_error;
pub mod tool_code_twice;
pub mod undeclared_variable_read;
pub mod unpinned_requirement;
pub mod variable_unused_by_code;
