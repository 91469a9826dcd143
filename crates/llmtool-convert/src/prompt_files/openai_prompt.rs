//! OpenAI's stored prompts (`pmpt_...`), read only: OpenAI stops serving them on 30 November
//! 2026 and asks for their text to move into the caller's own code, so what is read is what a
//! user can copy out of the dashboard, written as the Responses API request the prompt stood
//! for: `id` (or `prompt_id`), `version`, `name`, `model`, `instructions`, `input` (or
//! `messages`: messages of any role, their text as a string or `input_text` parts),
//! `variables` (names with test values), `temperature`, `top_p`, `max_output_tokens`,
//! `reasoning`, `text.format` and `tools`.
//!
//! The messages are kept in the tool's one prompt after their role lines, as other chat
//! prompts are; `{{name}}` is a value, as OpenAI fills it. A variable whose test value is an
//! image or a file is not text: it is left out, with its place in the prompt.

use serde_json::{Map, Value, json};

use super::syntax::Part;
use super::{ToolBuilder, canonical, chat, invalid};
use crate::codes::DROPPED_FIELD;
use crate::function::Converted;
use llmtool_format::diagnostic::Diagnostic;

/// The metadata extension key that keeps where the prompt came from (its id and version) and
/// the settings a tool has no field for.
const KEPT: &str = "x-openai-prompt";

/// The Responses API's settings that are tool parameters, and their names in a tool.
const PARAMETERS: [(&str, &str); 5] = [
    ("temperature", "temperature"),
    ("top_p", "top_p"),
    ("max_output_tokens", "max_tokens"),
    ("frequency_penalty", "frequency_penalty"),
    ("presence_penalty", "presence_penalty"),
];

/// The fields read; any other is left out with a warning.
const READ: [&str; 17] = [
    "id",
    "prompt_id",
    "version",
    "name",
    "model",
    "instructions",
    "input",
    "messages",
    "variables",
    "temperature",
    "top_p",
    "max_output_tokens",
    "frequency_penalty",
    "presence_penalty",
    "reasoning",
    "text",
    "tools",
];

/// The stored prompt's id in `value` (`id` or `prompt_id`, starting `pmpt_`), if it has one.
pub(crate) fn prompt_id(value: &Value) -> Option<&str> {
    ["id", "prompt_id"]
        .iter()
        .find_map(|key| value.get(key).and_then(Value::as_str))
        .filter(|id| id.starts_with("pmpt_"))
}

/// Reads a stored prompt, copied out as JSON (the text of the file), as a tool file
/// (canonical text).
pub fn read(text: &str) -> Result<Converted<String>, Box<Diagnostic>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let value: Value = serde_json::from_str(text)
        .map_err(|error| Box::new(crate::detect::not_json(text, "", &error)))?;
    let object = value.as_object().ok_or_else(|| invalid("an OpenAI prompt is a JSON object"))?;
    let mut diagnostics = Vec::new();
    let located = |at: &str, diagnostic: Diagnostic| match crate::lists::span_of(text, at) {
        Some(span) => diagnostic.at(span),
        None => diagnostic,
    };
    if object.get("prompt").is_some_and(Value::is_object) && !has_text(object) {
        return Err(invalid(
            "this is a call that names a stored prompt (`prompt.id`), not the prompt: its text is kept at OpenAI; copy the prompt's messages and settings from the dashboard (docs/convert.md, `openai-prompt`)",
        ));
    }
    // The variables whose test value is not text (an image, a file) are left out.
    let mut media = Vec::new();
    for (name, sample) in object.get("variables").and_then(Value::as_object).into_iter().flatten() {
        if !sample.is_string() {
            let kind = sample.get("type").and_then(Value::as_str).unwrap_or("an object");
            media.push(name.clone());
            diagnostics.push(located(
                &format!("variables.{name}"),
                Diagnostic::new(
                    &DROPPED_FIELD,
                    format!("variable `{name}` is given as `{kind}`, which OpenAI sends as such, and a tool's variables hold text: it is left out, with its place in the prompt"),
                ),
            ));
        }
    }
    let mut messages: Vec<(String, String)> = Vec::new();
    if let Some(instructions) = object.get("instructions") {
        match instructions.as_str() {
            Some(instructions) => messages.push(("system".into(), instructions.to_owned())),
            None => {
                return Err(Box::new(located(
                    "instructions",
                    *invalid("`instructions` is not text"),
                )));
            }
        }
    }
    let input = object.get("input").or_else(|| object.get("messages"));
    match input {
        Some(Value::String(prompt)) => messages.push(("user".into(), prompt.clone())),
        Some(Value::Array(items)) => {
            for (index, item) in items.iter().enumerate() {
                let key = if object.contains_key("input") { "input" } else { "messages" };
                let at = format!("{key}[{index}]");
                let role = item.get("role").and_then(Value::as_str);
                let content = item.get("content").and_then(message_text);
                let (Some(role), Some(content)) = (role, content) else {
                    return Err(Box::new(located(
                        &at,
                        *invalid(format!("`{at}` is not a message with a `role` and text content")),
                    )));
                };
                messages.push((role.to_owned(), content));
            }
        }
        Some(_) => {
            return Err(Box::new(located(
                "input",
                *invalid("`input` is neither text nor a list of messages"),
            )));
        }
        None => {}
    }
    if messages.is_empty() {
        return Err(invalid("the prompt has no `instructions` and no `input` messages to read"));
    }
    // One user message is the prompt itself; more are kept after their role lines.
    let mut parts = Vec::new();
    let lone_user = chat::is_lone_user(&messages);
    for (index, (role, content)) in messages.iter().enumerate() {
        if !lone_user {
            parts.push(Part::Literal(chat::role_line(index, role)));
        }
        parts.extend(super::langfuse::template(content, &mut diagnostics));
    }
    let parts = super::prompty::without_inputs(parts, &media);
    let mut metadata = Map::new();
    let name = object.get("name").and_then(Value::as_str).or_else(|| prompt_id(&value));
    if let Some(name) = name {
        metadata.insert("prompt_name".into(), json!(name));
    }
    if let Some(model) = object.get("model").filter(|model| model.is_string()) {
        metadata.insert("model_version".into(), model.clone());
    }
    let parameters: Map<String, Value> = PARAMETERS
        .iter()
        .filter_map(|(theirs, ours)| {
            object.get(*theirs).map(|value| ((*ours).to_owned(), value.clone()))
        })
        .collect();
    if !parameters.is_empty() {
        metadata.insert("parameters".into(), Value::Object(parameters));
    }
    let format = object.get("text").and_then(|text| text.get("format"));
    if let Some(kind) = format.and_then(|f| f.get("type")).and_then(Value::as_str)
        && matches!(kind, "json_schema" | "json_object")
    {
        metadata.insert("expected_output".into(), json!({ "format": "JSON" }));
        if kind == "json_schema" {
            diagnostics.push(located(
                "text",
                Diagnostic::new(&DROPPED_FIELD, "the answer's JSON schema is not carried: the tool expects a JSON answer, without its shape (the schema is kept under `metadata.x-openai-prompt`)"),
            ));
        }
    }
    let mut kept = Map::new();
    for key in ["id", "prompt_id", "version", "reasoning", "text"] {
        if let Some(value) = object.get(key) {
            kept.insert(key.into(), value.clone());
        }
    }
    if object.get("tools").and_then(Value::as_array).is_some_and(|tools| !tools.is_empty()) {
        diagnostics.push(located(
            "tools",
            Diagnostic::new(&DROPPED_FIELD, "`tools` is left out: the tools a prompt may call; a tool file is one prompt, not an agent"),
        ));
    }
    for key in object.keys().filter(|key| !READ.contains(&key.as_str()) && *key != "prompt") {
        diagnostics.push(located(
            key,
            Diagnostic::new(
                &DROPPED_FIELD,
                format!("`{key}` has no place in a tool file: left out"),
            ),
        ));
    }
    if !kept.is_empty() {
        metadata.insert(KEPT.into(), Value::Object(kept));
    }
    let variables = super::text_variables(&parts);
    let builder = ToolBuilder::new(&parts, metadata, variables, None)?.chat(!lone_user);
    Ok(Converted { value: canonical(&builder.finish(None)), diagnostics })
}

/// Whether the object holds the prompt's own text (`instructions`, `input` or `messages`).
fn has_text(object: &Map<String, Value>) -> bool {
    ["instructions", "input", "messages"].iter().any(|key| object.contains_key(*key))
}

/// A message's text: a string, or the text of its `input_text` (or `text`) parts, joined.
fn message_text(content: &Value) -> Option<String> {
    match content {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => parts
            .iter()
            .map(|part| match part.get("type").and_then(Value::as_str) {
                Some("input_text" | "text" | "output_text") => {
                    part.get("text").and_then(Value::as_str).map(str::to_owned)
                }
                _ => None,
            })
            .collect::<Option<Vec<String>>>()
            .map(|texts| texts.concat()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copied_prompt_is_read_with_its_messages_settings_and_values() {
        let text = r#"{
  "id": "pmpt_68b0c29740048196",
  "version": "3",
  "name": "Support reply",
  "model": "gpt-4.1",
  "instructions": "You help customers of {{company}}.",
  "input": [{"role": "user", "content": [{"type": "input_text", "text": "Customer: {{ customer }}\nIssue: {{issue}}"}]}],
  "variables": {"company": "Acme", "customer": "Ann", "issue": "a refund", "shot": {"type": "input_image", "image_url": "https://example.com/a.png"}},
  "temperature": 0.3,
  "max_output_tokens": 500,
  "text": {"format": {"type": "json_object"}},
  "tools": [{"type": "web_search"}]
}"#;
        let read = read(text).unwrap();
        let tool: Value = serde_json::from_str(&read.value).unwrap();
        assert_eq!(
            tool["model_prompt"],
            "system:\nYou help customers of {{company}}.\n\nuser:\nCustomer: {{customer}}\nIssue: {{issue}}"
        );
        let metadata = &tool["metadata"];
        assert_eq!(metadata["prompt_name"], "Support reply");
        assert_eq!(metadata["parameters"], json!({"temperature": 0.3, "max_tokens": 500}));
        assert_eq!(metadata["expected_output"]["format"], "JSON");
        assert_eq!(metadata["x-openai-prompt"]["id"], "pmpt_68b0c29740048196");
        let names: Vec<&str> = metadata["variables"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v["name"].as_str())
            .collect();
        assert_eq!(names, ["company", "customer", "issue"]);
        let said: Vec<&str> = read.diagnostics.iter().map(|d| d.message.as_str()).collect();
        assert!(said.iter().any(|m| m.contains("`shot` is given as `input_image`")), "{said:?}");
        assert!(said.iter().any(|m| m.contains("`tools` is left out")), "{said:?}");
        // A call that only names the prompt has no text to read.
        let call = r#"{"model": "gpt-4.1", "prompt": {"id": "pmpt_1", "variables": {"x": "1"}}}"#;
        assert!(super::read(call).unwrap_err().message.contains("kept at OpenAI"));
    }
}
