//! The template languages of the peers, both ways: a compiled prompt written in each, and
//! each read back as literal text and placeholders.

pub(crate) mod dollar;
pub(crate) mod handlebars;
pub(crate) mod jinja;
pub(crate) mod semantic_kernel;

use llmtool_format::model::VariableKind;
use llmtool_format::template::Piece;

/// Why a peer's template cannot be read: the message, and the construct it is about exactly
/// as written in the template (so that the reader of the file can find it there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TemplateError {
    pub(crate) message: String,
    pub(crate) construct: Option<String>,
}

impl TemplateError {
    /// `construct`, quoted as written, has no equivalent in a tool's prompt.
    pub(crate) fn no_equivalent(construct: &str) -> Self {
        Self {
            message: format!("`{construct}` has no equivalent in a tool's prompt"),
            construct: Some(construct.to_owned()),
        }
    }

    /// A problem with `construct`, said by `message`.
    pub(crate) fn at(construct: &str, message: String) -> Self {
        Self { message, construct: Some(construct.to_owned()) }
    }
}

impl From<&str> for TemplateError {
    fn from(message: &str) -> Self {
        Self { message: message.to_owned(), construct: None }
    }
}

impl From<String> for TemplateError {
    fn from(message: String) -> Self {
        Self { message, construct: None }
    }
}

/// A peer's template read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    Literal(String),
    /// A placeholder; `list` when the template joins a list there; `default`, the text a
    /// filter renders when no value is given (Jinja's `default("...")`).
    Variable {
        name: String,
        list: bool,
        default: Option<String>,
    },
}

/// What a writer needs for each slot: the name in the peer's syntax, and whether it is a list.
pub(crate) struct Slots<'a> {
    pub(crate) names: &'a [String],
    pub(crate) kinds: Vec<VariableKind>,
}

impl Slots<'_> {
    pub(crate) fn is_list(&self, slot: usize) -> bool {
        self.kinds.get(slot) == Some(&VariableKind::MultiSelect)
    }
}

/// Writes `pieces` with `literal` escaping text and `slot` writing placeholders.
pub(crate) fn write<'a>(
    pieces: impl Iterator<Item = Piece<'a>>,
    mut literal: impl FnMut(&str, &mut String),
    mut slot: impl FnMut(usize, &mut String),
) -> String {
    let mut out = String::new();
    for piece in pieces {
        match piece {
            Piece::Literal(text) => literal(text, &mut out),
            Piece::Slot(index) => slot(index, &mut out),
        }
    }
    out
}

/// The parts as an LLM-tool prompt: literal text, and `{{name}}` for each placeholder.
pub(crate) fn to_prompt(parts: &[Part]) -> String {
    let mut out = String::new();
    for part in parts {
        match part {
            Part::Literal(text) => out.push_str(text),
            Part::Variable { name, .. } => {
                out.push_str("{{");
                out.push_str(name);
                out.push_str("}}");
            }
        }
    }
    out
}
