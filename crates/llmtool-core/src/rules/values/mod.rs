//! Rules about the values given to a tool when it is rendered.

mod codes;

pub use codes::*;
