//! Langfuse prompts: the objects Langfuse's prompt management keeps, one per version
//! (`name`, `type`, `prompt`, `config`, `labels`, `tags`, `version`, `commitMessage`), as its
//! API returns them and as its export writes them (a JSON list of them).
//!
//! A `text` prompt is the tool's prompt. A `chat` prompt's messages are kept in the one prompt
//! as role lines (`system:`), a blank line between messages; a `placeholder` message (the
//! history an application inserts) has no place in a tool and is left out. Values go where
//! Langfuse's Python SDK puts them: `{{name}}`, whitespace inside the braces ignored, any
//! other `{{...}}` (`{{{name}}}`, which that SDK never fills) literal text. `config` is free
//! JSON: `model` and the sampling settings are read, and what a tool has no field for is kept
//! in `config.llmtool`, which Langfuse passes on untouched, so that an export comes back whole.

mod history;

pub use history::{LibraryVersion, export};
use serde_json::{Map, Value, json};

use super::syntax::{self, Part};
use super::{ToolBuilder, ToolSource, chat, invalid, single_model};
use crate::codes::{DROPPED_FIELD, PEER_RENDERS_DIFFERENTLY};
use crate::function::Converted;
use crate::lists::ListEntry;
use llmtool_format::diagnostic::Diagnostic;

/// The metadata extension key that keeps what Langfuse says of a prompt besides the tool:
/// its type, labels, tags, version, commit message and the `config` keys llmtool does not use.
const KEPT: &str = "x-langfuse";

/// The key of `config` that keeps what Langfuse has no field for.
const OWN: &str = "llmtool";

/// The tool parameters, which `config` holds under the same names (OpenAI's).
const PARAMETERS: [&str; 5] =
    ["temperature", "max_tokens", "top_p", "frequency_penalty", "presence_penalty"];

/// The same parameters as JavaScript applications name them in `config`, read as well.
const CAMEL_CASE: [(&str, &str); 4] = [
    ("maxTokens", "max_tokens"),
    ("topP", "top_p"),
    ("frequencyPenalty", "frequency_penalty"),
    ("presencePenalty", "presence_penalty"),
];

/// The keys of `config` that say the answer is JSON.
const JSON_ANSWER: [&str; 2] = ["response_format", "json_schema"];

/// What a prompt object says besides its name, prompt and config: kept as they are.
const PROMPT_FIELDS: [&str; 4] = ["labels", "tags", "version", "commitMessage"];

/// Reads one Langfuse prompt object (the text of a file that holds one).
pub(super) fn read(text: &str) -> Result<Converted<Value>, Box<Diagnostic>> {
    let value: Value = serde_json::from_str(text)
        .map_err(|error| Box::new(crate::detect::not_json(text, "", &error)))?;
    read_value(&value, Some((text, "")))
}

/// Whether `value` has the shape of a Langfuse prompt object.
pub(crate) fn is_prompt(value: &Value) -> bool {
    let Some(object) = value.as_object() else { return false };
    let typed = matches!(object.get("type").and_then(Value::as_str), Some("text" | "chat"));
    let langfuse_keys = ["config", "labels", "commitMessage", "version"];
    object.get("name").is_some_and(Value::is_string)
        && matches!(object.get("prompt"), Some(Value::String(_) | Value::Array(_)))
        && (typed || langfuse_keys.iter().any(|key| object.contains_key(*key)))
}

/// Reads a Langfuse prompt object; `source`, when given, is the JSON it was read from and the
/// object's place in it (`[2].`, in a list; empty for the whole), where the diagnostics are
/// placed.
pub(crate) fn read_value(
    value: &Value,
    source: Option<(&str, &str)>,
) -> Result<Converted<Value>, Box<Diagnostic>> {
    let object =
        value.as_object().ok_or_else(|| invalid("not a Langfuse prompt: not an object"))?;
    let name = object.get("name").and_then(Value::as_str);
    let name = name.ok_or_else(|| invalid("not a Langfuse prompt: no `name`"))?;
    let mut diagnostics = Vec::new();
    let located = |at: &str, diagnostic: Diagnostic| match source
        .and_then(|(text, place)| crate::lists::span_of(text, &format!("{place}{at}")))
    {
        Some(span) => diagnostic.at(span),
        None => diagnostic,
    };
    let mut kept = Map::new();
    // What the template's reading says, unless the exact prompt is kept in the block.
    let mut notes = Vec::new();
    let parts = match (object.get("type").and_then(Value::as_str), object.get("prompt")) {
        (None | Some("text"), Some(Value::String(prompt))) => template(prompt, &mut notes),
        (None | Some("chat"), Some(Value::Array(messages))) => {
            kept.insert("type".into(), json!("chat"));
            let mut parts = Vec::new();
            let mut kept_messages = 0;
            for (index, message) in messages.iter().enumerate() {
                let at = format!("prompt[{index}]");
                if message.get("type").and_then(Value::as_str) == Some("placeholder") {
                    let what = message.get("name").and_then(Value::as_str).unwrap_or("?");
                    diagnostics.push(located(&at, Diagnostic::new(
                        &DROPPED_FIELD,
                        format!("the placeholder `{what}` stands for messages the application inserts (a conversation so far), which a tool does not have: left out"),
                    )));
                    continue;
                }
                let role = message.get("role").and_then(Value::as_str);
                let content = message.get("content").and_then(Value::as_str);
                let (Some(role), Some(content)) = (role, content) else {
                    let problem = invalid(format!(
                        "`{at}` is neither a message (`role` and `content`, as text) nor a placeholder"
                    ));
                    return Err(Box::new(located(&at, *problem)));
                };
                if !chat::ROLES.contains(&role) {
                    diagnostics.push(located(&at, Diagnostic::new(
                        &PEER_RENDERS_DIFFERENTLY,
                        format!("the role `{role}` is kept as a role line, but an export gives back as messages only system, developer, user, assistant and tool ones: this message would join the one before"),
                    )));
                }
                parts.push(Part::Literal(chat::role_line(kept_messages, role)));
                parts.extend(template(content, &mut notes));
                kept_messages += 1;
            }
            parts
        }
        (Some(kind @ ("text" | "chat")), _) => {
            let shape = if kind == "text" { "text" } else { "a list of messages" };
            return Err(Box::new(located(
                "prompt",
                *invalid(format!("a `{kind}` prompt's `prompt` must be {shape}")),
            )));
        }
        (Some(other), _) => {
            return Err(Box::new(located(
                "type",
                *invalid(format!("`type` is `{other}`: Langfuse prompts are `text` or `chat`")),
            )));
        }
        (None, _) => return Err(invalid("not a Langfuse prompt: no `prompt`")),
    };
    let mut metadata = Map::new();
    metadata.insert("prompt_name".into(), json!(name));
    let config = object.get("config").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut parameters = Map::new();
    let mut other_config = Map::new();
    for (key, value) in &config {
        match key.as_str() {
            OWN => {}
            "model" if value.is_string() => {
                metadata.insert("model_version".into(), value.clone());
            }
            key if PARAMETERS.contains(&key) => {
                parameters.insert(key.into(), value.clone());
            }
            key if CAMEL_CASE.iter().any(|(theirs, _)| *theirs == key) => {
                let ours = CAMEL_CASE.iter().find(|(theirs, _)| *theirs == key).map(|(_, o)| *o);
                parameters.insert(ours.unwrap_or(key).into(), value.clone());
            }
            _ => {
                if JSON_ANSWER.contains(&key.as_str()) {
                    metadata.insert("expected_output".into(), json!({ "format": "JSON" }));
                }
                other_config.insert(key.clone(), value.clone());
            }
        }
    }
    if !parameters.is_empty() {
        metadata.insert("parameters".into(), Value::Object(parameters));
    }
    let extras = config.get(OWN).cloned();
    if !other_config.is_empty() {
        if extras.is_none() {
            let keys: Vec<String> = other_config.keys().map(|key| format!("`{key}`")).collect();
            diagnostics.push(located(
                "config",
                Diagnostic::new(
                    &DROPPED_FIELD,
                    format!(
                        "`config` holds {} that llmtool does not use: kept under `metadata.{KEPT}` and written back on export",
                        keys.join(", ")
                    ),
                ),
            ));
        }
        kept.insert("config".into(), Value::Object(other_config));
    }
    for field in PROMPT_FIELDS {
        let empty = |value: &&Value| value.is_null() || value.as_array().is_some_and(Vec::is_empty);
        if let Some(value) = object.get(field).filter(|value| !empty(value)) {
            kept.insert(field.into(), value.clone());
        }
    }
    if !kept.is_empty() {
        metadata.insert(KEPT.into(), Value::Object(kept));
    }
    let variables = super::text_variables(&parts);
    // A prompt Langfuse reads otherwise is kept exactly in the block, with its variables.
    let mut extras = extras;
    if let Some(Value::Object(block)) = &mut extras
        && block.get("model_prompt").is_some_and(Value::is_string)
    {
        let kept_tool = ToolBuilder {
            prompt: String::new(),
            metadata: metadata.clone(),
            variables: Vec::new(),
            chat: false,
        }
        .finish(Some(&Value::Object(block.clone())));
        if exported_prompt(&kept_tool).as_ref() == object.get("prompt") {
            return Ok(Converted { value: kept_tool, diagnostics });
        }
        // Edited in Langfuse since the export: the edit wins over the copy the export kept,
        // and a variable of the copy that Langfuse does not fill in the edit is none.
        block.remove("model_prompt");
        let filled: Vec<&str> = variables.iter().filter_map(|v| v["name"].as_str()).collect();
        let unfilled = without_unfilled(block, &filled);
        let mut message = "the prompt was changed in Langfuse after llmtool exported it, so the exact prompt kept here is out of date: the prompt is read from `prompt`, by Langfuse's rules".to_owned();
        if !unfilled.is_empty() {
            let names: Vec<String> = unfilled.iter().map(|name| format!("`{name}`")).collect();
            message.push_str(&format!(
                ", which fill no value {}: left out of the variables",
                names.join(", ")
            ));
        }
        diagnostics.push(located(
            &format!("config.{OWN}.model_prompt"),
            Diagnostic::new(&PEER_RENDERS_DIFFERENTLY, message),
        ));
    }
    // A prompt llmtool exported (with its block) has the tool's variables, required by its author.
    let unfilled_said = extras.is_none().then(|| variables.first()).flatten();
    if let Some(first) = unfilled_said.and_then(|v| v["name"].as_str()) {
        diagnostics.push(located(
            "prompt",
            Diagnostic::new(
                &PEER_RENDERS_DIFFERENTLY,
                format!(
                    "Langfuse leaves a variable it is given no value for as it is written (`{{{{{first}}}}}`) and writes a `None` value as nothing; the tool's variables are required, so `llmtool render` and `run` ask for each"
                ),
            )
            .with_help("give an empty value (`--var name=`) where Langfuse would be given `None`"),
        ));
    }
    diagnostics.append(&mut notes);
    let variables = super::in_block_order(variables, extras.as_ref(), is_name);
    // A chat prompt's messages are sent as messages, each written after its role line.
    let is_chat = matches!(object.get("prompt"), Some(Value::Array(_)));
    let builder = ToolBuilder::new(&parts, metadata, variables, None)?.chat(is_chat);
    Ok(Converted { value: builder.finish(extras.as_ref()), diagnostics })
}

/// Removes from the variables `block` declares those whose names (as Langfuse's syntax
/// writes them) are not among `filled`; their names.
fn without_unfilled(block: &mut Map<String, Value>, filled: &[&str]) -> Vec<String> {
    let declared = block.get_mut("metadata").and_then(|m| m.get_mut("variables"));
    let Some(Value::Array(declared)) = declared else { return Vec::new() };
    let names = declared.iter().filter_map(|v| v["name"].as_str());
    let written = super::template_names(names, is_name);
    let mut unfilled = Vec::new();
    let mut kept = Vec::new();
    for (variable, name) in declared.drain(..).zip(written) {
        if filled.contains(&name.as_str()) {
            kept.push(variable);
        } else {
            unfilled.push(variable["name"].as_str().unwrap_or_default().to_owned());
        }
    }
    *declared = kept;
    unfilled
}

/// The `prompt` an export of `tool` writes, to tell whether a prompt object still holds what
/// llmtool wrote.
fn exported_prompt(tool: &Value) -> Option<Value> {
    let document = llmtool_format::document::Document::from_text(super::canonical(tool));
    let written = write(&ToolSource::new(&document)?);
    let object: Value = serde_json::from_str(&written.value).ok()?;
    object.get("prompt").cloned()
}

/// One version of a Langfuse prompt, read from a file of them (Langfuse's export).
#[derive(Debug, Clone)]
pub struct LangfuseVersion {
    pub name: String,
    /// Its number in Langfuse, when the file says.
    pub version: Option<u64>,
    pub labels: Vec<String>,
    pub tags: Vec<String>,
    pub commit_message: Option<String>,
    /// The version as a tool file (canonical text) with what the reading said, or why it
    /// cannot be one. Its number, labels, tags and commit message are the fields above, not
    /// the tool's: a library keeps them as its own.
    pub tool: Result<Converted<String>, Box<Diagnostic>>,
}

/// Every version of every prompt in `text` (Langfuse's export, a JSON list of prompt objects,
/// or one prompt object): the prompts in the order they first appear, each one's versions
/// from the oldest (the lowest `version`) on. An error when `text` holds no Langfuse prompt.
pub fn versions(text: &str) -> Result<Vec<LangfuseVersion>, Box<Diagnostic>> {
    // A byte-order mark is set aside; the diagnostics still point into the whole text.
    let unmarked = text.strip_prefix('\u{feff}').unwrap_or(text);
    let bom = text.len() - unmarked.len();
    let shift = |diagnostic: Diagnostic| diagnostic.shifted(bom);
    let mut found = versions_unmarked(unmarked).map_err(|problem| Box::new(shift(*problem)))?;
    for version in &mut found {
        version.tool = match std::mem::replace(&mut version.tool, Err(invalid(""))) {
            Ok(read) => Ok(Converted {
                value: read.value,
                diagnostics: read.diagnostics.into_iter().map(shift).collect(),
            }),
            Err(problem) => Err(Box::new(shift(*problem))),
        };
    }
    Ok(found)
}

/// [`versions`] of a text with no byte-order mark.
fn versions_unmarked(text: &str) -> Result<Vec<LangfuseVersion>, Box<Diagnostic>> {
    let value: Value = serde_json::from_str(text)
        .map_err(|error| Box::new(crate::detect::not_json(text, "", &error)))?;
    let entries: Vec<(String, &Value)> = match &value {
        Value::Array(items) => {
            items.iter().enumerate().map(|(index, item)| (format!("[{index}]."), item)).collect()
        }
        single => vec![(String::new(), single)],
    };
    let mut found: Vec<LangfuseVersion> = Vec::new();
    for (place, entry) in entries {
        if !is_prompt(entry) {
            let at = place.trim_end_matches('.');
            let what = if at.is_empty() { "the file".to_owned() } else { format!("`{at}`") };
            let problem = invalid(format!(
                "{what} is not a Langfuse prompt (`name` and `prompt`, with `type`, `config`, `labels` or `version`)"
            ));
            return Err(match crate::lists::span_of(text, at) {
                Some(span) if !at.is_empty() => Box::new(problem.at(span)),
                _ => problem,
            });
        }
        let strings = |key: &str| -> Vec<String> {
            let list = entry.get(key).and_then(Value::as_array);
            list.into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect()
        };
        let tool = read_value(entry, Some((text, &place))).map(|read| Converted {
            value: super::canonical(&without_library_state(read.value)),
            diagnostics: read.diagnostics,
        });
        found.push(LangfuseVersion {
            name: entry["name"].as_str().unwrap_or_default().to_owned(),
            version: entry["version"].as_u64(),
            labels: strings("labels"),
            tags: strings("tags"),
            commit_message: entry["commitMessage"].as_str().map(str::to_owned),
            tool,
        });
    }
    // By prompt, in the order each first appears; within one, oldest first (stable).
    let order: Vec<String> = found.iter().fold(Vec::new(), |mut names, version| {
        if !names.contains(&version.name) {
            names.push(version.name.clone());
        }
        names
    });
    found.sort_by_key(|version| {
        (order.iter().position(|name| *name == version.name), version.version.unwrap_or(0))
    });
    Ok(found)
}

/// `tool` without what a library keeps of a version itself (its number, labels, tags and
/// note), so that a version's content does not change when a label moves to another.
fn without_library_state(mut tool: Value) -> Value {
    let metadata = tool.get_mut("metadata").and_then(Value::as_object_mut);
    let Some(metadata) = metadata else { return tool };
    if let Some(Value::Object(kept)) = metadata.get_mut(KEPT) {
        for field in PROMPT_FIELDS {
            kept.remove(field);
        }
        if kept.is_empty() {
            metadata.remove(KEPT);
        }
    }
    tool
}

/// `entries` with, of the Langfuse prompts among them, only each name's latest version (the
/// highest `version`; the last listed when none is numbered): a note in `diagnostics` names
/// the versions left out, which only a library keeps (`llmtool publish --from langfuse`).
pub(crate) fn latest_versions<'a>(
    entries: &[ListEntry<'a>],
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<ListEntry<'a>> {
    let name = |entry: &ListEntry<'_>| {
        is_prompt(entry.value).then(|| entry.value["name"].as_str().unwrap_or_default().to_owned())
    };
    let version = |entry: &ListEntry<'_>| entry.value["version"].as_u64().unwrap_or(0);
    let mut latest: Vec<(String, usize)> = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let Some(name) = name(entry) else { continue };
        match latest.iter_mut().find(|(seen, _)| *seen == name) {
            Some((_, at)) if version(entry) >= version(&entries[*at]) => *at = index,
            Some(_) => {}
            None => latest.push((name, index)),
        }
    }
    let mut left_out: Vec<(String, Vec<String>)> = Vec::new();
    let kept = entries
        .iter()
        .enumerate()
        .filter(|(index, entry)| {
            let Some(name) = name(entry) else { return true };
            if latest.iter().any(|(_, at)| at == index) {
                return true;
            }
            let shown =
                entry.value["version"].as_u64().map_or_else(|| entry.at.clone(), |v| v.to_string());
            match left_out.iter_mut().find(|(seen, _)| *seen == name) {
                Some((_, versions)) => versions.push(shown),
                None => left_out.push((name, vec![shown])),
            }
            false
        })
        .map(|(_, entry)| entry.clone())
        .collect();
    for (name, versions) in left_out {
        diagnostics.push(Diagnostic::new(
            &DROPPED_FIELD,
            format!(
                "`{name}`: the latest version is imported, not {} {}; `llmtool publish --from langfuse` brings every version, with its labels, into a library",
                if versions.len() == 1 { "version" } else { "versions" },
                versions.join(", ")
            ),
        ));
    }
    kept
}

/// A Langfuse template as literal text and values, read as the Python SDK fills it: each
/// `{{` to the next `}}` is the value named by what is between them, trimmed, when that is a
/// name a tool's placeholder can say the same way; anything else is literal text.
pub(super) fn template(text: &str, diagnostics: &mut Vec<Diagnostic>) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut from = 0;
    while let Some(open) = text[from..].find("{{").map(|at| from + at) {
        let Some(close) = text[open + 2..].find("}}").map(|at| open + 2 + at) else { break };
        literal.push_str(&text[from..open]);
        let name = python_strip(&text[open + 2..close]);
        if is_name(name) {
            if !literal.is_empty() {
                parts.push(Part::Literal(std::mem::take(&mut literal)));
            }
            parts.push(Part::Variable { name: name.to_owned(), list: false, default: None });
        } else {
            let raw = &text[open..close + 2];
            if raw.len() > 4 || name.is_empty() {
                diagnostics.push(Diagnostic::new(
                    &PEER_RENDERS_DIFFERENTLY,
                    format!(
                        "Langfuse's Python SDK fills `{raw}` only with a value named `{name}` (its JavaScript SDK differs), which a tool's placeholder cannot name: kept as literal text"
                    ),
                ));
            }
            literal.push_str(raw);
        }
        from = close + 2;
    }
    literal.push_str(&text[from..]);
    if !literal.is_empty() {
        parts.push(Part::Literal(literal));
    }
    parts
}

/// `text` without the whitespace Python's `str.strip` takes off (Unicode's, and the
/// separators U+001C to U+001F).
fn python_strip(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

/// Whether `name`, written `{{name}}`, is read as the value `name` both by Langfuse's Python
/// SDK and by a tool's prompt: one line, no braces at its ends, no `{{` or `}}` inside.
fn is_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('{')
        && !name.ends_with('}')
        && !llmtool_format::template::holds_braces(name)
        && !name.contains('\n')
        && name.trim() == name
}

/// The tool as a Langfuse prompt object (pretty JSON): a `text` prompt, or the `chat` prompt
/// it was imported from; its model and sampling settings in `config`, and what Langfuse has no
/// field for in `config.llmtool`.
pub(super) fn write(source: &ToolSource) -> Converted<String> {
    let mut diagnostics = Vec::new();
    let (names, _) = source.template_names(is_name, &mut diagnostics);
    let mut placed = Vec::new();
    let prompt = syntax::write(
        source.pieces(),
        |text, out| out.push_str(text),
        |slot, out| {
            placed.push(names[slot].clone());
            out.push_str("{{");
            out.push_str(&names[slot]);
            out.push_str("}}");
        },
    );
    // Langfuse has no way to write a literal `{{name}}`, nor a value right after a `{`.
    let read_back: Vec<String> = template(&prompt, &mut Vec::new())
        .into_iter()
        .filter_map(|part| match part {
            Part::Variable { name, .. } => Some(name),
            Part::Literal(_) => None,
        })
        .collect();
    let exact = read_back != placed;
    if exact {
        diagnostics.push(Diagnostic::new(
            &PEER_RENDERS_DIFFERENTLY,
            "Langfuse fills this prompt's `{{...}}` otherwise (a value right after a literal `{`, which its Python SDK leaves unfilled, or literal text that reads as a value): the exact prompt is kept in `config.llmtool` for import",
        ));
    }
    let kept = source.metadata().get(KEPT).and_then(Value::as_object).cloned().unwrap_or_default();
    let mut object = Map::new();
    object.insert("name".into(), json!(source.metadata_text("prompt_name").unwrap_or("tool")));
    let is_chat =
        source.template.is_chat() || kept.get("type").and_then(Value::as_str) == Some("chat");
    if is_chat {
        object.insert("type".into(), json!("chat"));
        let messages = chat::messages(&prompt).into_iter();
        let messages = messages.map(|(role, content)| json!({ "role": role, "content": content }));
        object.insert("prompt".into(), messages.collect());
    } else {
        object.insert("type".into(), json!("text"));
        object.insert("prompt".into(), json!(prompt));
    }
    let mut config = kept.get("config").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut mapped = vec!["prompt_name", KEPT];
    if let Some(model) = single_model(source.metadata().get("model_version")) {
        config.insert("model".into(), json!(model));
        mapped.push("model_version");
    }
    if let Some(Value::Object(parameters)) = source.metadata().get("parameters") {
        let carried = parameters.keys().all(|key| PARAMETERS.contains(&key.as_str()));
        if carried {
            config.extend(parameters.clone());
            mapped.push("parameters");
        }
    }
    let mut extras = source.extras(&mapped, true);
    if exact {
        let prompt = source.json.get("model_prompt").cloned().unwrap_or_default();
        extras.insert("model_prompt".into(), prompt);
    }
    if !extras.is_empty() {
        config.insert(OWN.into(), Value::Object(extras));
    }
    object.insert("config".into(), Value::Object(config));
    object.insert("labels".into(), kept.get("labels").cloned().unwrap_or_else(|| json!([])));
    object.insert("tags".into(), kept.get("tags").cloned().unwrap_or_else(|| json!([])));
    for field in ["version", "commitMessage"] {
        if let Some(value) = kept.get(field) {
            object.insert(field.into(), value.clone());
        }
    }
    let text = serde_json::to_string_pretty(&Value::Object(object)).unwrap_or_default() + "\n";
    Converted { value: text, diagnostics }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        template(text, &mut Vec::new())
            .into_iter()
            .filter_map(|part| match part {
                Part::Variable { name, .. } => Some(name),
                Part::Literal(_) => None,
            })
            .collect()
    }

    #[test]
    fn values_are_where_the_python_sdk_puts_them() {
        assert_eq!(names("a {{ x }} {{y}} {{x}} {{{z}}} {{a b}}"), ["x", "y", "x", "a b"]);
        assert_eq!(names("{{\n name\t}} and {{\u{1f}tab}}"), ["name", "tab"]);
        assert!(names("x {{name").is_empty());
        assert!(names("x }}name{{").is_empty());
        assert!(names("{{}} {{ }} {{a {{b}}").is_empty());
        let mut said = Vec::new();
        let parts = template("{{{z}}}!", &mut said);
        assert_eq!(parts, [Part::Literal("{{{z}}}!".into())]);
        assert!(said[0].message.contains("`{z`"), "{}", said[0].message);
    }

    #[test]
    fn a_byte_order_mark_does_not_move_what_is_said() {
        let text = "\u{feff}[{\"name\": \"c\", \"type\": \"chat\", \"version\": 1, \"prompt\": [{\"role\": \"user\", \"content\": \"Hi\"}, {\"type\": \"placeholder\", \"name\": \"history\"}]}]";
        let found = versions(text).unwrap();
        let read = found[0].tool.as_ref().unwrap();
        // A role an export cannot give back is said at its message.
        let human = text.replace("\"role\": \"user\"", "\"role\": \"human\"");
        let found = versions(&human).unwrap();
        let noted = found[0]
            .tool
            .as_ref()
            .unwrap()
            .diagnostics
            .iter()
            .any(|d| d.message.contains("`human`"));
        assert!(noted);
        let said = read.diagnostics.iter().find(|d| d.message.contains("`history`")).unwrap();
        let span = said.primary.as_ref().unwrap().span;
        assert!(
            text[span.start..span.end].starts_with("{\"type\": \"placeholder\""),
            "{}",
            &text[span.start..span.end]
        );
    }
}
