//! The typed model of a tool file. Every value keeps the span it was written at, so rules can
//! point at it; serializing a model gives plain JSON without the spans.

use serde::Serialize;

use crate::span::Span;

/// A value and the span of the JSON that held it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Spanned<T> {
    #[serde(skip)]
    pub span: Span,
    pub value: T,
}

impl<T> Spanned<T> {
    pub fn new(span: Span, value: T) -> Self {
        Self { span, value }
    }
}

impl Spanned<String> {
    pub fn as_str(&self) -> &str {
        &self.value
    }
}

/// A list whose elements each keep their own span.
pub type SpannedList = Spanned<Vec<Spanned<String>>>;

/// One tool file.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Tool {
    #[serde(skip)]
    pub span: Span,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<Spanned<Version>>,
    /// `None` only when the file lacks it (an error was reported).
    pub model_prompt: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// A smart tool's Python code, when written at the top level (the seeds' example keeps it
    /// in `metadata`; [`Tool::code`] reads either). Run only when asked, in the sandbox.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_code: Option<Spanned<String>>,
    /// `x-dlp`: what runs do with sensitive values in the prompt (`off`, `warn`, `redact`,
    /// `block`; see docs/dlp.md). An extension key, kept by every conversion that keeps them.
    #[serde(rename = "x-dlp", skip_serializing_if = "Option::is_none")]
    pub dlp: Option<Spanned<String>>,
    /// `x-chat`: whether the prompt is a chat, sent as the messages its role lines open
    /// (see [`crate::chat`]). An extension key, which the importers of chat formats write.
    #[serde(rename = "x-chat", skip_serializing_if = "Option::is_none")]
    pub chat: Option<Spanned<bool>>,
}

/// One entry of `metadata.functions`: a built-in function (`{"builtin": "fetch_url"}`, with
/// the `database` a `query_database` reads), a library tool (`{"tool": "registry:SLUG"}`) or
/// an MCP server's function (`{"mcp": "SERVER", "name": "FUNCTION"}`). Each key is kept as
/// written; `check` says when an entry names no source, or several (LT114).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FunctionEntry {
    #[serde(skip)]
    pub span: Span,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub builtin: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<Spanned<String>>,
}

/// Where a function of `metadata.functions` comes from, once its entry is whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FunctionSource<'a> {
    /// One of llmtool's own functions; `database` names the database a `query_database`
    /// reads.
    Builtin { name: &'a str, database: Option<&'a str> },
    /// A tool of the library, by its reference (`registry:SLUG`, `registry:SLUG@3`).
    Tool(&'a str),
    /// A function of an MCP server the operator configured.
    Mcp { server: &'a str, name: &'a str },
}

impl FunctionEntry {
    /// Where the function comes from; `None` when the entry names no source or several, or
    /// an MCP server without the function's name.
    pub fn source(&self) -> Option<FunctionSource<'_>> {
        fn text(field: Option<&Spanned<String>>) -> Option<&str> {
            field.map(Spanned::as_str)
        }
        match (text(self.builtin.as_ref()), text(self.tool.as_ref()), text(self.mcp.as_ref())) {
            (Some(name), None, None) => {
                Some(FunctionSource::Builtin { name, database: text(self.database.as_ref()) })
            }
            (None, Some(reference), None) => Some(FunctionSource::Tool(reference)),
            (None, None, Some(server)) => {
                Some(FunctionSource::Mcp { server, name: text(self.name.as_ref())? })
            }
            _ => None,
        }
    }

    /// The name the model knows the function by: a built-in's own, a library tool's slug (as
    /// a portable function name), an MCP function's.
    pub fn offered_name(&self) -> Option<String> {
        match self.source()? {
            FunctionSource::Builtin { name, .. } | FunctionSource::Mcp { name, .. } => {
                Some(name.to_owned())
            }
            FunctionSource::Tool(reference) => {
                let slug = reference.strip_prefix("registry:")?;
                let slug = slug.split_once('@').map_or(slug, |(slug, _)| slug);
                Some(crate::naming::slug(slug, crate::naming::MAX_NAME))
            }
        }
    }
}

/// The two kinds of tool file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// A `model_prompt` with `{{variable}}` placeholders, sent to a model.
    Prompt,
    /// A "smart tool": Python `tool_code` whose `execute(variables)` gives the answer, run
    /// in the sandbox only when asked.
    Smart,
}

/// `version`, kept exactly as written: a string or an integer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Version {
    Text(String),
    Integer(i64),
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Metadata {
    #[serde(skip)]
    pub span: Span,
    /// A smart tool's name (its `prompt_name`, in the sibling format's words).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<Spanned<String>>,
    /// A smart tool's Python code, where the seeds' example writes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_code: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_name: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_notes: Option<Spanned<String>>,
    /// Always a list here; a single string in the file becomes a one-element list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_version: Option<SpannedList>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub creator: Option<Creator>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Parameters>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variables: Option<Spanned<Vec<Variable>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_output: Option<ExpectedOutput>,
    /// Read from either shape (flat `avatar_type` + `avatar`, or a nested object).
    #[serde(skip_serializing_if = "Option::is_none", flatten)]
    pub avatar: Option<Avatar>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Spanned<String>>,
    /// A smart tool's packages, one requirement each (a single string in the file is read as
    /// one requirement a line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requirements: Option<SpannedList>,
    /// `functions`: what the model may call during a run (an llmtool extension of the
    /// format; see docs/functions.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub functions: Option<Spanned<Vec<FunctionEntry>>>,
    /// Whether these keys were written at the top level, as the smart tools' format lays a
    /// smart tool out, rather than in a `metadata` object.
    #[serde(skip)]
    pub flat: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Creator {
    #[serde(skip)]
    pub span: Span,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub organization: Option<Spanned<String>>,
}

/// Model parameters. Each known one is a number; others are kept by name.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Parameters {
    #[serde(skip)]
    pub span: Span,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<Parameter>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<Parameter>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<Parameter>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frequency_penalty: Option<Parameter>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub presence_penalty: Option<Parameter>,
    /// Parameters the format does not name, with their JSON values, in file order.
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
    /// The key of each of `other`, where it is written.
    #[serde(skip)]
    pub other_keys: Vec<Spanned<String>>,
}

/// A numeric parameter.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Parameter {
    #[serde(skip)]
    pub span: Span,
    /// The number exactly as written (without the quotes, if it was written as a string).
    #[serde(skip)]
    pub raw: String,
    pub value: f64,
    #[serde(skip)]
    pub written_as_string: bool,
}

impl Parameters {
    /// The known parameters that are present, with their names.
    pub fn known(&self) -> impl Iterator<Item = (&'static str, &Parameter)> {
        [
            ("temperature", &self.temperature),
            ("max_tokens", &self.max_tokens),
            ("top_p", &self.top_p),
            ("frequency_penalty", &self.frequency_penalty),
            ("presence_penalty", &self.presence_penalty),
        ]
        .into_iter()
        .filter_map(|(name, p)| p.as_ref().map(|p| (name, p)))
    }
}

/// The three variable types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum VariableKind {
    #[serde(rename = "text")]
    Text,
    #[serde(rename = "single-select")]
    SingleSelect,
    #[serde(rename = "multi-select")]
    MultiSelect,
}

impl VariableKind {
    pub const ALL: [VariableKind; 3] =
        [VariableKind::Text, VariableKind::SingleSelect, VariableKind::MultiSelect];

    pub const fn as_str(self) -> &'static str {
        match self {
            VariableKind::Text => "text",
            VariableKind::SingleSelect => "single-select",
            VariableKind::MultiSelect => "multi-select",
        }
    }

    pub const fn is_select(self) -> bool {
        !matches!(self, VariableKind::Text)
    }

    /// The canonical type for a name as written, including the Spanish and Korean editions'
    /// translations. Returns the kind and whether the name was a translation.
    pub fn from_name(name: &str) -> Option<(VariableKind, bool)> {
        let kind = match name {
            "text" => return Some((VariableKind::Text, false)),
            "single-select" => return Some((VariableKind::SingleSelect, false)),
            "multi-select" => return Some((VariableKind::MultiSelect, false)),
            "texto" | "텍스트" => VariableKind::Text,
            "selección-única" | "seleccion-unica" | "단일 선택" => VariableKind::SingleSelect,
            "selección-múltiple" | "seleccion-multiple" | "다중 선택" => {
                VariableKind::MultiSelect
            }
            _ => return None,
        };
        Some((kind, true))
    }
}

impl std::fmt::Display for VariableKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Variable {
    #[serde(skip)]
    pub span: Span,
    pub name: Spanned<String>,
    /// The type; `None` when missing (it is then text) or unknown with no likely meaning (the
    /// checks that depend on it are left out). An unknown type that likely means one (reported)
    /// is that one.
    #[serde(rename = "type", serialize_with = "serialize_kind")]
    pub kind: Option<Spanned<VariableKind>>,
    /// The type name exactly as written, when there was one.
    #[serde(skip)]
    pub type_written: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Spanned<DefaultValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_values: Option<SpannedList>,
}

#[allow(clippy::ref_option, reason = "serde passes fields by reference")]
fn serialize_kind<S: serde::Serializer>(
    kind: &Option<Spanned<VariableKind>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_str(kind.as_ref().map_or(VariableKind::Text, |k| k.value).as_str())
}

impl Variable {
    pub fn kind(&self) -> VariableKind {
        self.kind.as_ref().map_or(VariableKind::Text, |k| k.value)
    }

    /// Whether the type is written but unknown, with no likely meaning: the checks that depend
    /// on the type leave the variable out.
    pub fn kind_unknown(&self) -> bool {
        self.kind.is_none() && self.type_written.is_some()
    }

    /// The allowed values as strings (empty when there are none).
    pub fn allowed(&self) -> impl Iterator<Item = &str> {
        self.allowed_values.iter().flat_map(|list| list.value.iter().map(Spanned::as_str))
    }
}

/// A variable's default: one string, or a list for a multi-select.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum DefaultValue {
    Text(String),
    List(Vec<Spanned<String>>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct ExpectedOutput {
    #[serde(skip)]
    pub span: Span,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_values: Option<SpannedList>,
    /// An image's size, `WIDTHxHEIGHT` or `auto` (see [`crate::output::ImageSize`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<Spanned<String>>,
}

/// The avatar, from either shape of the file.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Avatar {
    #[serde(skip)]
    pub span: Span,
    #[serde(rename = "avatar_type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<Spanned<String>>,
    #[serde(rename = "avatar", skip_serializing_if = "Option::is_none")]
    pub data: Option<Spanned<String>>,
    /// Whether the file used the nested `{avatar_type, avatar}` object.
    #[serde(skip)]
    pub nested: bool,
}

impl Tool {
    /// The declared variables (empty when there are none).
    pub fn variables(&self) -> &[Variable] {
        self.metadata
            .as_ref()
            .and_then(|m| m.variables.as_ref())
            .map_or(&[], |v| v.value.as_slice())
    }

    /// Whether `metadata.variables` is present (even if empty).
    pub fn declares_variables(&self) -> bool {
        self.metadata.as_ref().is_some_and(|m| m.variables.is_some())
    }

    pub fn prompt(&self) -> &str {
        self.model_prompt.as_ref().map_or("", |p| p.value.as_str())
    }

    /// Whether the prompt is sent as a chat's messages (`"x-chat": true`), rather than as one
    /// user message.
    pub fn is_chat(&self) -> bool {
        self.chat.as_ref().is_some_and(|chat| chat.value)
    }

    /// The display name: `prompt_name` (or a smart tool's `tool_name`), if any.
    pub fn name(&self) -> Option<&str> {
        let metadata = self.metadata.as_ref()?;
        metadata.prompt_name.as_ref().or(metadata.tool_name.as_ref()).map(Spanned::as_str)
    }

    /// A smart tool's Python code: `tool_code` at the top level, else in `metadata`.
    pub fn code(&self) -> Option<&Spanned<String>> {
        self.tool_code.as_ref().or_else(|| self.metadata.as_ref()?.tool_code.as_ref())
    }

    /// Whether this is a prompt tool or a smart tool (one with `tool_code`).
    pub fn kind(&self) -> ToolKind {
        if self.code().is_some() { ToolKind::Smart } else { ToolKind::Prompt }
    }

    /// A smart tool's requirements, as written (empty when there are none).
    pub fn requirements(&self) -> &[Spanned<String>] {
        self.metadata
            .as_ref()
            .and_then(|m| m.requirements.as_ref())
            .map_or(&[], |list| list.value.as_slice())
    }

    /// The models of `metadata.model_version`, in order (empty when there are none).
    pub fn models(&self) -> Vec<&str> {
        self.metadata
            .as_ref()
            .and_then(|m| m.model_version.as_ref())
            .map(|list| list.value.iter().map(|m| m.value.as_str()).collect())
            .unwrap_or_default()
    }
}
