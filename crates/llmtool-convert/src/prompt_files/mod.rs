//! Prompt files of other tools: Microsoft Prompty, Google Dotprompt, the `llm` CLI's template,
//! Langfuse's prompt objects and Semantic Kernel's prompt folder (`semantic_kernel`, two files). Each keeps the prompt as a template in its own syntax
//! with its inputs declared beside it; what a peer has no field for is kept under an `llmtool`
//! key the peer ignores, so that `import` gives back the same tool.

pub(crate) mod chat;
mod dotprompt;
pub(crate) mod front_matter;
pub mod langfuse;
mod llm_template;
pub mod openai_prompt;
mod prompty;
pub mod semantic_kernel;
mod semantic_kernel_messages;
mod syntax;
pub(crate) mod yaml;
pub(crate) mod yaml_read;

use serde_json::{Map, Value};

use super::codes::{INVALID_SOURCE, RENAMED_PARAMETER, UNDECLARED_INPUT};
use super::function::Converted;
use super::naming;
use super::sibling_files::{NoFolder, SiblingFiles};
use llmtool_format::diagnostic::Diagnostic;
use llmtool_format::document::Document;
use llmtool_format::model::VariableKind;
use llmtool_format::template::{Piece, ToolTemplate, VariableSpec};

/// The prompt-file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PromptFormat {
    /// A `.prompty` file: YAML front matter, then a Jinja2 body with `user:` role markers.
    Prompty,
    /// A Dotprompt `.prompt` file: YAML front matter, then a Handlebars body.
    Dotprompt,
    /// A template of the `llm` CLI: YAML with a `prompt` in Python's `string.Template` syntax.
    LlmTemplate,
    /// A Langfuse prompt object: JSON with `name`, `type`, `prompt` (`{{name}}` placeholders)
    /// and `config`.
    Langfuse,
}

impl PromptFormat {
    pub const ALL: [PromptFormat; 4] = [
        PromptFormat::Prompty,
        PromptFormat::Dotprompt,
        PromptFormat::LlmTemplate,
        PromptFormat::Langfuse,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            PromptFormat::Prompty => "prompty",
            PromptFormat::Dotprompt => "dotprompt",
            PromptFormat::LlmTemplate => "llm-template",
            PromptFormat::Langfuse => "langfuse",
        }
    }

    /// The file's extension, with its dot.
    pub const fn extension(self) -> &'static str {
        match self {
            PromptFormat::Prompty => ".prompty",
            PromptFormat::Dotprompt => ".prompt",
            PromptFormat::LlmTemplate => ".yaml",
            PromptFormat::Langfuse => ".json",
        }
    }

    /// Writes the tool of `document` (which must have no errors) in this format.
    pub fn write(self, document: &Document) -> Converted<String> {
        let Some(source) = ToolSource::new(document) else {
            let problem = Diagnostic::new(&INVALID_SOURCE, "the tool file has errors");
            return Converted { value: String::new(), diagnostics: vec![problem] };
        };
        match self {
            PromptFormat::Prompty => prompty::write(&source),
            PromptFormat::Dotprompt => dotprompt::write(&source),
            PromptFormat::LlmTemplate => llm_template::write(&source),
            PromptFormat::Langfuse => langfuse::write(&source),
        }
    }

    /// Reads a file in this format back as a tool file (canonical text). A file it names
    /// beside itself cannot be reached: see [`PromptFormat::read_in`].
    pub fn read(self, text: &str) -> Result<Converted<String>, Box<Diagnostic>> {
        self.read_in(text, &NoFolder)
    }

    /// [`PromptFormat::read`], reaching the files the source names beside itself (Prompty's
    /// `inputs: ${file:schema.json}`) through `files`.
    pub fn read_in(
        self,
        text: &str,
        files: &dyn SiblingFiles,
    ) -> Result<Converted<String>, Box<Diagnostic>> {
        let converted = match self {
            PromptFormat::Prompty => prompty::read(text, files)?,
            PromptFormat::Dotprompt => dotprompt::read(text)?,
            PromptFormat::LlmTemplate => llm_template::read(text)?,
            PromptFormat::Langfuse => langfuse::read(text)?,
        };
        Ok(Converted { value: canonical(&converted.value), diagnostics: converted.diagnostics })
    }

    /// The format of a file named `path`, by its extension (a `.json` file may be anything).
    pub fn from_path(path: &str) -> Option<PromptFormat> {
        let extension = std::path::Path::new(path).extension()?.to_string_lossy().to_lowercase();
        if extension == "yml" {
            return Some(PromptFormat::LlmTemplate);
        }
        PromptFormat::ALL
            .into_iter()
            .filter(|format| *format != PromptFormat::Langfuse)
            .find(|format| format.extension()[1..] == extension)
    }
}

/// The prompt of `document` (a tool file without errors) in Jinja, which promptfoo's Nunjucks
/// reads the same way, with the name each variable has there (its own, or a snake_case name
/// when it is not an identifier) and whether it is a list; `None` when the file has errors.
pub(crate) fn jinja_prompt(document: &Document) -> Option<(String, Vec<(String, bool)>)> {
    let source = ToolSource::new(document)?;
    let names =
        template_names(source.variables().iter().map(|v| v.name.as_str()), syntax::jinja::is_name);
    let kinds: Vec<VariableKind> = source.variables().iter().map(|v| v.kind).collect();
    let slots = syntax::Slots { names: &names, kinds: kinds.clone() };
    let prompt = syntax::jinja::write(source.pieces(), &slots);
    let lists = kinds.iter().map(|kind| *kind == VariableKind::MultiSelect);
    Some((prompt, names.into_iter().zip(lists).collect()))
}

/// A Jinja (Nunjucks) template of another tool, `text`, as a tool's prompt and its variables
/// (text, in order of first use); the error places the construct a prompt cannot say in `text`.
pub(crate) fn from_jinja(text: &str, what: &str) -> Result<(String, Vec<Value>), Box<Diagnostic>> {
    let parts =
        syntax::jinja::read(text).map_err(|error| template_problem(text, 0, what, error))?;
    let variables = text_variables(&parts);
    let builder = ToolBuilder::new(&parts, Map::new(), variables.clone(), Some((text, 0)))?;
    Ok((builder.prompt, variables))
}

/// The literal text a Jinja template `text` stands for, when it places no value.
pub(crate) fn jinja_text(text: &str) -> Option<String> {
    let parts = syntax::jinja::read(text).ok()?;
    parts
        .into_iter()
        .map(|part| match part {
            syntax::Part::Literal(text) => Some(text),
            syntax::Part::Variable { .. } => None,
        })
        .collect()
}

/// `text` as Jinja literal text: each `{{`, `{%` and `{#` written as an expression that
/// prints it (promptfoo renders assertion values as Nunjucks).
pub(crate) fn jinja_literal(text: &str) -> String {
    let mut out = String::new();
    syntax::jinja::escape(text, &mut out);
    out
}

/// `text` as one YAML document, if it is one.
pub(crate) fn parse_yaml(text: &str) -> Option<Value> {
    yaml_read::from_str(text).ok()
}

/// A tool file's text in canonical form.
pub(crate) fn canonical(tool: &Value) -> String {
    let text = serde_json::to_string(tool).unwrap_or_default();
    llmtool_format::format::format_source(&text, false).map_or(text, |formatted| formatted.text)
}

/// What every writer starts from: the tool as JSON, its variables and its compiled prompt.
pub(crate) struct ToolSource {
    pub(crate) json: Map<String, Value>,
    /// `json`'s `metadata` (empty when there is none).
    metadata: Map<String, Value>,
    pub(crate) template: ToolTemplate,
}

impl ToolSource {
    fn new(document: &Document) -> Option<Self> {
        let tool = document.tool.as_ref()?;
        let Value::Object(mut json) = serde_json::from_str(&document.text).ok()? else {
            return None;
        };
        if tool.metadata.as_ref().is_some_and(|metadata| metadata.flat) {
            json = nested(json);
        }
        let metadata = json.get("metadata").and_then(Value::as_object).cloned().unwrap_or_default();
        Some(Self { json, metadata, template: ToolTemplate::new(tool) })
    }

    pub(crate) fn metadata(&self) -> &Map<String, Value> {
        &self.metadata
    }

    pub(crate) fn metadata_text(&self, key: &str) -> Option<&str> {
        self.metadata().get(key).and_then(Value::as_str)
    }

    pub(crate) fn variables(&self) -> &[VariableSpec] {
        self.template.variables()
    }

    /// The fields the peer has no place for: the tool's JSON without `model_prompt` and
    /// without the metadata keys in `mapped`. `variables` stays only when `keep_variables`.
    pub(crate) fn extras(&self, mapped: &[&str], keep_variables: bool) -> Map<String, Value> {
        let mut extras = Map::new();
        for (key, value) in &self.json {
            match key.as_str() {
                "model_prompt" => {}
                "metadata" => {
                    let mut metadata = Map::new();
                    for (key, value) in self.metadata() {
                        let wanted = if key == "variables" {
                            keep_variables
                        } else {
                            !mapped.contains(&key.as_str())
                        };
                        if wanted {
                            metadata.insert(key.clone(), value.clone());
                        }
                    }
                    if !metadata.is_empty() {
                        extras.insert("metadata".into(), Value::Object(metadata));
                    }
                }
                _ => {
                    extras.insert(key.clone(), value.clone());
                }
            }
        }
        extras
    }

    /// The names the peer's template syntax can use, one per variable: the variable's own name
    /// when `fits` accepts it, else a distinct snake_case name (LT702 says so).
    pub(crate) fn template_names(
        &self,
        fits: impl Fn(&str) -> bool,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> (Vec<String>, bool) {
        let names = template_names(self.variables().iter().map(|v| v.name.as_str()), fits);
        let mut renamed = false;
        for (variable, name) in self.variables().iter().zip(&names) {
            if *name != variable.name {
                renamed = true;
                diagnostics.push(
                    Diagnostic::new(
                        &RENAMED_PARAMETER,
                        format!("variable `{}` is `{name}` in this template syntax", variable.name),
                    )
                    .at(variable.declared_at)
                    .with_help(
                        "the original name is kept in the `llmtool` block and comes back on import",
                    ),
                );
            }
        }
        (names, renamed)
    }

    pub(crate) fn pieces(&self) -> impl Iterator<Item = Piece<'_>> {
        self.template.pieces()
    }
}

/// A smart tool in its own flat layout as the format's usual one: the metadata's keys moved
/// into a `metadata` object.
fn nested(json: Map<String, Value>) -> Map<String, Value> {
    let (metadata, mut top): (Map<String, Value>, Map<String, Value>) =
        json.into_iter().partition(|(key, _)| {
            key != "tool_code" && llmtool_format::model::keys::METADATA.contains(&key.as_str())
        });
    top.insert("metadata".into(), Value::Object(metadata));
    top
}

/// The names a template syntax that accepts the names `fits` uses for variables named
/// `names`: each name itself when it fits, else a distinct snake_case name.
pub(crate) fn template_names<'a>(
    names: impl Iterator<Item = &'a str>,
    fits: impl Fn(&str) -> bool,
) -> Vec<String> {
    let mut names: Vec<String> = names
        .map(|name| {
            if fits(name) {
                name.to_owned()
            } else {
                let slug = naming::slug(name, naming::MAX_NAME);
                if fits(&slug) { slug } else { format!("{slug}_") }
            }
        })
        .collect();
    naming::distinct(&mut names, naming::MAX_NAME);
    names
}

/// A required text variable for each value `parts` place, in order of first use: what a source
/// that declares no variables (Langfuse, an OpenAI stored prompt) stands for.
pub(crate) fn text_variables(parts: &[syntax::Part]) -> Vec<Value> {
    let mut variables: Vec<Value> = Vec::new();
    for part in parts {
        if let syntax::Part::Variable { name, .. } = part
            && !variables.iter().any(|v| v["name"].as_str() == Some(name))
        {
            variables.push(variable_json(name, VariableKind::Text, None, None, None));
        }
    }
    variables
}

/// The variables a reader found in a template, for a file with an `llmtool` block (`extras`):
/// the block's variables replace them, and are in declaration order, so the names the
/// template uses for them (those `fits` accepts) are listed in that order for the renaming,
/// then any the template uses beyond them (added by hand after the export).
pub(crate) fn in_block_order(
    variables: Vec<Value>,
    extras: Option<&Value>,
    fits: impl Fn(&str) -> bool,
) -> Vec<Value> {
    let Some(original) = extras.and_then(|e| e["metadata"]["variables"].as_array()) else {
        return variables;
    };
    let names = template_names(original.iter().filter_map(|v| v["name"].as_str()), fits);
    let added: Vec<Value> = variables
        .into_iter()
        .filter(|v| !names.iter().any(|name| v["name"].as_str() == Some(name)))
        .collect();
    let mut ordered: Vec<Value> =
        names.into_iter().map(|name| serde_json::json!({ "name": name })).collect();
    ordered.extend(added);
    ordered
}

/// The tool JSON that a reader assembles: the peer's own fields first, then the `llmtool`
/// block over them, and the variables renamed back to the names the block keeps.
pub(crate) struct ToolBuilder {
    pub(crate) prompt: String,
    pub(crate) metadata: Map<String, Value>,
    /// Variables as the peer declares them (by their template names).
    pub(crate) variables: Vec<Value>,
    /// Whether the prompt is the peer's messages, each after its role line: the tool is
    /// marked `"x-chat": true`, to be sent as those messages.
    pub(crate) chat: bool,
}

impl ToolBuilder {
    /// The builder of a tool whose prompt is the template `parts`. Refused when the template's
    /// literal text spells a placeholder of one of its own variables (`{% raw %}{{name}}{%
    /// endraw %}` beside `{{name}}`): in a tool's prompt every `{{name}}` is the placeholder, so
    /// the literal could not stay literal. The error is placed at the literal text in `source`
    /// (its text, and where the template starts), when it can be found there.
    pub(crate) fn new(
        parts: &[syntax::Part],
        metadata: Map<String, Value>,
        variables: Vec<Value>,
        source: Option<(&str, usize)>,
    ) -> Result<Self, Box<Diagnostic>> {
        let prompt = syntax::to_prompt(parts);
        let mut placed: Vec<&str> = parts
            .iter()
            .filter_map(|part| match part {
                syntax::Part::Variable { name, .. } => Some(name.as_str()),
                syntax::Part::Literal(_) => None,
            })
            .collect();
        // Each placeholder of the prompt that names a variable is one the template placed, or
        // literal text that spells one.
        for placeholder in llmtool_format::template::placeholders(&prompt) {
            let declared = variables.iter().any(|v| v["name"].as_str() == Some(placeholder.name));
            if !declared {
                continue;
            }
            match placed.iter().position(|name| *name == placeholder.name) {
                Some(at) => {
                    placed.remove(at);
                }
                None => {
                    let name = placeholder.name;
                    let problem = Diagnostic::new(
                        &INVALID_SOURCE,
                        format!(
                            "the template writes `{{{{{name}}}}}` as literal text and also uses `{name}` as a value: in a tool's prompt every `{{{{{name}}}}}` is the value's place, so the literal text cannot be kept"
                        ),
                    );
                    let at = source.and_then(|(text, from)| {
                        let at = from + first_literal(text.get(from..)?, name)?;
                        Some(llmtool_format::span::Span::new(at, at + name.len()))
                    });
                    return Err(Box::new(match at {
                        Some(at) => problem.at_labelled(at, "written here"),
                        None => problem,
                    }));
                }
            }
        }
        Ok(Self { prompt, metadata, variables, chat: false })
    }

    /// The same builder, its prompt marked as a chat when `chat` says so.
    pub(crate) fn chat(self, chat: bool) -> Self {
        Self { chat, ..self }
    }

    pub(crate) fn finish(self, extras: Option<&Value>) -> Value {
        let mut tool = Map::new();
        let mut metadata = self.metadata;
        let mut prompt = self.prompt;
        let mut variables = Value::Array(self.variables);
        if let Some(Value::Object(extras)) = extras {
            for (key, value) in extras {
                if key == "metadata" {
                    for (key, value) in value.as_object().into_iter().flatten() {
                        if key == "variables" {
                            (prompt, variables) = with_block_variables(&prompt, &variables, value);
                        } else {
                            metadata.insert(key.clone(), value.clone());
                        }
                    }
                } else if key == "model_prompt" {
                    // The exact prompt, kept where the peer's reading changes it.
                    if let Value::String(exact) = value {
                        prompt.clone_from(exact);
                    }
                } else {
                    tool.insert(key.clone(), value.clone());
                }
            }
        }
        // Declared even when there are none, if the prompt holds a `{{...}}` the source wrote as
        // literal text: without a declaration every `{{name}}` is a placeholder.
        let literal_braces = llmtool_format::template::placeholders(&prompt).next().is_some();
        if variables.as_array().is_some_and(|v| !v.is_empty()) || literal_braces {
            metadata.insert("variables".into(), variables);
        }
        tool.insert("model_prompt".into(), Value::String(prompt));
        tool.insert("metadata".into(), Value::Object(metadata));
        // The exact prompt kept in the block is the tool's as it was, and so is its mark.
        let exact = extras.is_some_and(|extras| extras.get("model_prompt").is_some());
        if self.chat && !exact && !tool.contains_key("x-chat") {
            tool.insert("x-chat".into(), Value::Bool(true));
        }
        Value::Object(tool)
    }
}

/// Declares each value the template (`parts`) uses that `variables` does not: a text variable
/// with the source's default from `defaults`, else empty, as Jinja and Handlebars render a value
/// they are not given; with a warning (LT709) at its first use in `text`, from byte `from`.
/// So the tool's placeholders are exactly the source's.
pub(crate) fn declare_used(
    parts: &[syntax::Part],
    variables: &mut Vec<Value>,
    defaults: Option<&Map<String, Value>>,
    (text, from): (&str, usize),
    diagnostics: &mut Vec<Diagnostic>,
) {
    let used = |wanted: &str| {
        parts.iter().any(|p| matches!(p, syntax::Part::Variable { name, .. } if name == wanted))
    };
    let declared_by_source: Vec<String> =
        variables.iter().filter_map(|v| v["name"].as_str().map(str::to_owned)).collect();
    for part in parts {
        let syntax::Part::Variable { name, .. } = part else { continue };
        if variables.iter().any(|v| v["name"].as_str() == Some(name)) {
            continue;
        }
        let problem = if let Some((object, _)) = name.split_once('.') {
            // A path into an object input: a text variable of its own stands for it, and the
            // object, when the template uses it only through paths, is not asked for.
            let current = variables.iter().position(|v| v["name"].as_str() == Some(object));
            if let Some(at) = current.filter(|_| !used(object)) {
                variables.remove(at);
            }
            // The source's default for the path (Dotprompt's `input.default`), else required
            // when the source declares the object, else empty unless given.
            let declared = declared_by_source.iter().any(|n| n == object);
            let default = defaults
                .and_then(|d| {
                    d.get(name).or_else(|| {
                        name.split('.').try_fold(d.get(object)?, |value, key| value.get(key))
                    })
                })
                .cloned()
                .or_else(|| (!declared).then(|| Value::String(String::new())));
            variables.push(variable_json(name, VariableKind::Text, None, None, default));
            Diagnostic::new(
                &UNDECLARED_INPUT,
                format!(
                    "the template reaches into `{object}` for `{name}`: a text variable named `{name}` stands for it (give it as `--var {name}=...`)"
                ),
            )
        } else {
            let default = defaults.and_then(|d| d.get(name)).cloned();
            let said = match &default {
                Some(default) => format!("its default, {default}"),
                None => "nothing".to_owned(),
            };
            let default = default.or_else(|| Some(Value::String(String::new())));
            variables.push(variable_json(name, VariableKind::Text, None, None, default));
            Diagnostic::new(
                &UNDECLARED_INPUT,
                format!(
                    "the template uses `{name}`, which the inputs do not declare: a text variable, rendered as {said} unless given, as the source renders it"
                ),
            )
        };
        diagnostics.push(match text.get(from..).and_then(|body| first_use(body, name)) {
            Some(at) => {
                problem.at(llmtool_format::span::Span::new(from + at, from + at + name.len()))
            }
            None => problem,
        });
    }
}

/// The default text each value takes from the template's filters (Jinja's `{{ name |
/// default("text") }}`), by name, for the values whose every use gives the same one. A value
/// used both with a default and without one, or with two, is refused at its first use in
/// `text` (from byte `from`): a tool's variable has one default, used in every place.
pub(crate) fn filter_defaults(
    parts: &[syntax::Part],
    (text, from): (&str, usize),
) -> Result<Map<String, Value>, Box<Diagnostic>> {
    let mut defaults = Map::new();
    let uses = || {
        parts.iter().filter_map(|part| match part {
            syntax::Part::Variable { name, default, .. } => Some((name, default)),
            syntax::Part::Literal(_) => None,
        })
    };
    for (name, default) in uses() {
        let Some(default) = default else { continue };
        if uses().all(|(other, theirs)| other != name || theirs.as_ref() == Some(default)) {
            defaults.insert(name.clone(), Value::String(default.clone()));
            continue;
        }
        let problem = Diagnostic::new(
            &INVALID_SOURCE,
            format!(
                "`{name}` is given the default {default:?} in one place and not in another: a tool's variable has one default, for every place it is used"
            ),
        );
        let at = text.get(from..).and_then(|body| first_use(body, name));
        return Err(Box::new(match at {
            Some(at) => {
                problem.at(llmtool_format::span::Span::new(from + at, from + at + name.len()))
            }
            None => problem,
        }));
    }
    Ok(defaults)
}

/// Where `body` first uses `name` as a value, inside a `{{...}}` that is not quoted text (see
/// [`quoted`]): not as a word of its text.
pub(crate) fn first_use(body: &str, name: &str) -> Option<usize> {
    let quoted = quoted(body);
    spelled(body, name).find(|at| !quoted.iter().any(|range| range.contains(at)))
}

/// Where `body` first spells `{{name}}` as literal text: inside quoted text (see [`quoted`]),
/// else at its first spelling at all.
fn first_literal(body: &str, name: &str) -> Option<usize> {
    let quoted = quoted(body);
    let mut spellings = spelled(body, name).peekable();
    let first = spellings.peek().copied();
    spellings.find(|at| quoted.iter().any(|range| range.contains(at))).or(first)
}

/// Every place `body` spells `name` inside a `{{...}}`, whatever surrounds it.
fn spelled<'a>(body: &'a str, name: &'a str) -> impl Iterator<Item = usize> + 'a {
    body.match_indices(name).map(|(at, _)| at).filter(move |&at| {
        let before = body[..at].trim_end_matches([' ', '\t', '-', '~', '+', '[']);
        let after = body[at + name.len()..].chars().next();
        before.ends_with("{{") && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// The parts of a template's `body` that its language writes out as they are, or not at all,
/// rather than reading as values: Jinja's `{% raw %}` blocks and `{# #}` comments, Handlebars'
/// `{{! }}` and `{{!-- --}}` comments and `\{{` escapes (to the end of their `}}`).
fn quoted(body: &str) -> Vec<std::ops::Range<usize>> {
    let closers: [(&str, &str); 5] =
        [("{% raw", "endraw"), ("{%- raw", "endraw"), ("{#", "#}"), ("{{!", "}}"), ("\\{{", "}}")];
    let mut ranges = Vec::new();
    let mut from = 0;
    while let Some((at, opener, closer)) = closers
        .iter()
        .filter_map(|(opener, closer)| Some((from + body[from..].find(opener)?, *opener, *closer)))
        .min_by_key(|(at, ..)| *at)
    {
        let closer =
            if opener == "{{!" && body[at..].starts_with("{{!--") { "--}}" } else { closer };
        let end = body[at + opener.len()..]
            .find(closer)
            .map_or(body.len(), |end| at + opener.len() + end + closer.len());
        ranges.push(at..end);
        from = end;
    }
    ranges
}

/// The prompt and variables of a file llmtool wrote, whose `llmtool` block keeps the tool's
/// variables (`block`) because the template had to rename them: `peer` lists the variables as
/// the file's template names them, in the block's order, then any the file declares or uses
/// beyond the block (added by hand after the export). The first are renamed back in `prompt`
/// to the block's names, matched by position; the others are kept as they are.
fn with_block_variables(prompt: &str, peer: &Value, block: &Value) -> (String, Value) {
    let names = |list: &Value| -> Vec<String> {
        list.as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v["name"].as_str().map(str::to_owned))
            .collect()
    };
    let (peer_names, original) = (names(peer), names(block));
    let mut variables = block.as_array().cloned().unwrap_or_default();
    if peer_names.len() < original.len() {
        // An input of the block is gone from the file: positions no longer match.
        return (prompt.to_owned(), Value::Array(variables));
    }
    variables.extend(peer.as_array().into_iter().flatten().skip(original.len()).cloned());
    let renamed = &peer_names[..original.len()];
    if renamed == original.as_slice() {
        return (prompt.to_owned(), Value::Array(variables));
    }
    let mut out = String::with_capacity(prompt.len());
    let mut last = 0;
    for placeholder in llmtool_format::template::placeholders(prompt) {
        if let Some(i) = renamed.iter().position(|name| name == placeholder.name) {
            out.push_str(&prompt[last..placeholder.range.start]);
            out.push_str(&format!("{{{{{}}}}}", original[i]));
            last = placeholder.range.end;
        }
    }
    out.push_str(&prompt[last..]);
    (out, Value::Array(variables))
}

/// A variable of a tool file, as JSON.
pub(crate) fn variable_json(
    name: &str,
    kind: VariableKind,
    description: Option<&str>,
    allowed: Option<Vec<Value>>,
    default: Option<Value>,
) -> Value {
    let mut variable = Map::new();
    variable.insert("name".into(), Value::String(name.to_owned()));
    let kind = match kind {
        VariableKind::Text => "text",
        VariableKind::SingleSelect => "single-select",
        VariableKind::MultiSelect => "multi-select",
    };
    variable.insert("type".into(), Value::String(kind.into()));
    if let Some(description) = description {
        variable.insert("description".into(), Value::String(description.to_owned()));
    }
    if let Some(allowed) = allowed {
        let allowed = allowed.iter().map(|value| Value::String(as_text(value))).collect();
        variable.insert("allowed_values".into(), Value::Array(allowed));
    }
    if let Some(default) = default {
        // A peer's default may be a number, a boolean or a list, where a tool file has text
        // (or, for a multi-select, a list of texts).
        let default = match (kind, default) {
            ("multi-select", Value::Array(items)) => {
                items.iter().map(|item| Value::String(as_text(item))).collect()
            }
            (_, default) => Value::String(as_text(&default)),
        };
        variable.insert("default".into(), default);
    }
    Value::Object(variable)
}

/// A peer's value as a variable's text: a string as it is, a list as its items joined as
/// llmtool joins a multi-select's, anything else as its JSON text (`18`, `false`).
fn as_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        Value::Array(items) => items
            .iter()
            .map(as_text)
            .collect::<Vec<_>>()
            .join(llmtool_format::template::LIST_SEPARATOR),
        other => other.to_string(),
    }
}

/// The default of an input the peer gives none: none when it is required (or a single-select,
/// which has no empty choice), else the empty text or the empty list.
pub(crate) fn empty_default(kind: VariableKind, required: bool) -> Option<Value> {
    match kind {
        _ if required => None,
        VariableKind::Text => Some(Value::String(String::new())),
        VariableKind::MultiSelect => Some(Value::Array(Vec::new())),
        VariableKind::SingleSelect => None,
    }
}

/// The model's id when the tool names one model (a string or a list of one).
pub(crate) fn single_model(model_version: Option<&Value>) -> Option<&str> {
    match model_version? {
        Value::String(id) => Some(id),
        Value::Array(ids) if ids.len() == 1 => ids[0].as_str(),
        _ => None,
    }
}

/// A default as JSON.
pub(crate) fn default_json(variable: &VariableSpec) -> Option<Value> {
    variable.default.as_ref().map(|default| match default {
        llmtool_format::template::Value::Text(text) => Value::String(text.clone()),
        llmtool_format::template::Value::List(items) => {
            items.iter().cloned().map(Value::String).collect()
        }
    })
}

/// The diagnostic of a template that cannot be read: `what` (`the template`) and the reason,
/// at the construct as written, found in `text` from byte `from` on (the template's own text,
/// or where its part of the file begins), when it is there.
fn template_problem(
    text: &str,
    from: usize,
    what: &str,
    error: syntax::TemplateError,
) -> Box<Diagnostic> {
    let syntax::TemplateError { message, construct } = error;
    let diagnostic = Diagnostic::new(&INVALID_SOURCE, format!("{what}: {message}"));
    let found = construct.as_deref().and_then(|construct| {
        let at = from + text.get(from..)?.find(construct)?;
        Some(llmtool_format::span::Span::new(at, at + construct.len()))
    });
    Box::new(match found {
        Some(span) => diagnostic.at(span),
        None => diagnostic,
    })
}

fn invalid(message: impl Into<String>) -> Box<Diagnostic> {
    Box::new(Diagnostic::new(&INVALID_SOURCE, message))
}
