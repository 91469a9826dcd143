//! JSON syntax: the tree with spans, the tokenizer, the recovering parser (with a fast path
//! for clean files) and its codes.

pub mod ast;
mod clean;
pub mod codes;
mod decode;
mod escape;
mod lexer;
pub mod literal;
mod parser;
mod quote;

pub use ast::{Key, KeyName, Member, Node, NodeKind};
pub use decode::{decode_utf8, utf8_string};
pub(crate) use lexer::is_json_number;
pub use parser::{MAX_DEPTH, SyntaxTree, parse};
pub use quote::{quote, write_quoted};
