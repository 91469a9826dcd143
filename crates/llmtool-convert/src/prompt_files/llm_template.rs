//! The `llm` CLI's template (`llm -t NAME`): YAML with `prompt` (Python `string.Template`
//! placeholders), `model`, `defaults`, `options` and `extract`. `llm` refuses keys it does not
//! know, so what it has no field for goes in a `# llmtool:` comment block, which `import`
//! reads back.

use serde_json::{Map, Value, json};

use super::front_matter;
use super::syntax::{self, Slots, dollar};
use super::{
    ToolBuilder, ToolSource, default_json, in_block_order, invalid, single_model, template_problem,
    variable_json, yaml, yaml_read,
};
use crate::codes::{DROPPED_FIELD, PEER_RENDERS_DIFFERENTLY};
use crate::function::Converted;
use llmtool_format::diagnostic::Diagnostic;
use llmtool_format::model::VariableKind;
use llmtool_format::template::LIST_SEPARATOR;

/// The first line of the comment block that keeps the fields `llm` has no place for.
const COMMENT_HEADER: &str = "# llmtool:";

/// The metadata extension key that keeps the fields of an imported template that a tool has no
/// place for (`system`, `fragments`, ...); the export writes them back.
const KEPT_FIELDS: &str = "x-llm-template";

/// The fields of `llm`'s template schema that a tool file has no place for.
const OTHER_FIELDS: [&str; 9] = [
    "system",
    "attachments",
    "attachment_types",
    "extract_last",
    "schema_object",
    "fragments",
    "system_fragments",
    "tools",
    "functions",
];

/// The variable `llm` fills with the prompt text given on the command line or standard input.
const INPUT: &str = "input";

pub(super) fn write(source: &ToolSource) -> Converted<String> {
    let mut diagnostics = Vec::new();
    let (names, _) = source.template_names(dollar::is_name, &mut diagnostics);
    let slots = Slots { names: &names, kinds: source.variables().iter().map(|v| v.kind).collect() };
    let mut fields = Map::new();
    let prompt = dollar::write(source.pieces(), &slots);
    // A chat of a system and a user turn is the template's `system` and `prompt`; `llm` has
    // no place for other turns, which stay in the prompt as text.
    let turns =
        if source.template.is_chat() { llmtool_format::chat::split(&prompt) } else { Vec::new() };
    match turns.as_slice() {
        [system, user] if system.role == "system" && user.role == "user" => {
            fields.insert("prompt".into(), json!(user.text));
            fields.insert("system".into(), json!(system.text));
        }
        _ => {
            if !turns.is_empty() {
                diagnostics.push(Diagnostic::new(
                    &PEER_RENDERS_DIFFERENTLY,
                    "`llm` sends a system prompt and a prompt, and this chat has other turns: they are written in the prompt as text, after their role lines",
                ));
            }
            fields.insert("prompt".into(), json!(prompt));
        }
    }
    if let Some(Value::Object(kept)) = source.metadata().get(KEPT_FIELDS) {
        for (key, value) in kept {
            if OTHER_FIELDS.contains(&key.as_str()) {
                fields.insert(key.clone(), value.clone());
            }
        }
    }
    let mut mapped = vec!["parameters", KEPT_FIELDS];
    if let Some(model) = single_model(source.metadata().get("model_version")) {
        fields.insert("model".into(), json!(model));
        mapped.push("model_version");
    }
    let mut defaults = Map::new();
    for (variable, name) in source.variables().iter().zip(&names) {
        let Some(default) = default_json(variable) else { continue };
        if name == INPUT {
            diagnostics.push(
                Diagnostic::new(
                    &PEER_RENDERS_DIFFERENTLY,
                    format!(
                        "`llm` fills `${INPUT}` with the prompt text it is given, so the default of `{}` is not used",
                        variable.name
                    ),
                )
                .at(variable.declared_at),
            );
        }
        defaults.insert(name.clone(), json!(text_of(&default)));
    }
    if !defaults.is_empty() {
        fields.insert("defaults".into(), Value::Object(defaults));
    }
    if let Some(Value::Object(parameters)) = source.metadata().get("parameters") {
        fields.insert("options".into(), Value::Object(parameters.clone()));
    }
    let expected = source.metadata().get("expected_output");
    if expected.and_then(|o| o["type"].as_str()) == Some("code") {
        fields.insert("extract".into(), json!(true));
    }
    let extras = source.extras(&mapped, true);
    let mut text = String::new();
    // The block is written even when it is empty: it marks the file as an export, whose
    // prompt import gives back as it is (a template written by hand gets `llm`'s reading).
    if extras.is_empty() {
        text.push_str(COMMENT_HEADER);
        text.push('\n');
    } else {
        let mut block = Map::new();
        block.insert("llmtool".into(), Value::Object(extras));
        for line in yaml::document(&block).lines() {
            text.push('#');
            if !line.is_empty() {
                text.push(' ');
                text.push_str(line);
            }
            text.push('\n');
        }
    }
    text.push_str(&yaml::document(&fields));
    Converted { value: text, diagnostics }
}

/// A default as `llm` passes it to the template: text, a list joined as `render` joins it.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(items) => items
            .iter()
            .map(|item| item.as_str().map_or_else(|| item.to_string(), str::to_owned))
            .collect::<Vec<_>>()
            .join(LIST_SEPARATOR),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        other => other.to_string(),
    }
}

pub(super) fn read(text: &str) -> Result<Converted<Value>, Box<Diagnostic>> {
    let mut diagnostics = Vec::new();
    let extras = comment_block(text)?;
    let fields = match yaml_read::from_str(text) {
        Ok(Value::Object(fields)) => fields,
        // `llm` takes a file that is one string as the prompt.
        Ok(Value::String(prompt)) => Map::from_iter([("prompt".to_owned(), json!(prompt))]),
        Ok(_) => return Err(invalid("the template is neither a YAML mapping nor a prompt")),
        Err(error) => return Err(yaml_read::problem(text, text, "the template", &error)),
    };
    // With no prompt, `llm` sends the text it is given.
    let prompt = fields.get("prompt").and_then(Value::as_str).filter(|p| !p.is_empty());
    let mut parts = dollar::read(prompt.unwrap_or("$input"))
        .map_err(|e| template_problem(text, 0, "the prompt", e))?;
    let uses_input = |parts: &[syntax::Part]| {
        parts.iter().any(|p| matches!(p, syntax::Part::Variable { name, .. } if name == INPUT))
    };
    let system = fields.get("system").and_then(Value::as_str).filter(|s| !s.is_empty());
    let system_parts = match system {
        Some(system) => {
            dollar::read(system).map_err(|e| template_problem(text, 0, "the system prompt", e))?
        }
        None => Vec::new(),
    };
    // `llm` puts the input given on a new line after a prompt that does not use `$input`
    // (our own exports, which carry the `# llmtool:` block, are given back as they were).
    let appends_input =
        prompt.is_some() && extras.is_none() && !uses_input(&parts) && !uses_input(&system_parts);
    if appends_input {
        parts.push(syntax::Part::Literal("\n".into()));
        parts.push(syntax::Part::Variable { name: INPUT.into(), list: false, default: None });
        diagnostics.push(Diagnostic::new(
            &PEER_RENDERS_DIFFERENTLY,
            "`llm` adds the text it is given on a new line after a prompt that has no `$input`: the prompt ends with `{{input}}` there (empty by default, when llm sends the prompt alone)",
        ));
    }
    // The system prompt is a message of its own: the tool is a chat of a system turn and a
    // user turn.
    let is_chat = !system_parts.is_empty();
    if is_chat {
        let mut both = vec![syntax::Part::Literal("system:\n".into())];
        both.extend(system_parts);
        both.push(syntax::Part::Literal("\n\nuser:\n".into()));
        both.append(&mut parts);
        parts = both;
    }
    let mut metadata = Map::new();
    let mut kept = Map::new();
    let mut defaults = Map::new();
    for (key, value) in &fields {
        match key.as_str() {
            "prompt" => {}
            "system" if system.is_some() => {}
            "name" if value.is_string() => {
                metadata.insert("prompt_name".into(), value.clone());
            }
            "model" if value.is_string() => {
                metadata.insert("model_version".into(), value.clone());
            }
            "options" if value.is_object() => {
                metadata.insert("parameters".into(), value.clone());
            }
            "extract" => {
                if value.as_bool() == Some(true) {
                    metadata.insert("expected_output".into(), json!({ "type": "code" }));
                }
            }
            // `llm` answers with the last fenced block: a code answer, whose block the tool
            // takes first. Kept as well, so that an export gives `llm` the same setting back.
            "extract_last" if value.as_bool() == Some(true) => {
                metadata.insert("expected_output".into(), json!({ "type": "code" }));
                if extras.is_none() {
                    let mut differs = Diagnostic::new(
                        &PEER_RENDERS_DIFFERENTLY,
                        "`extract_last` makes `llm` answer with the last fenced code block; the tool expects code, and takes the first block (or the first in its `language`)",
                    );
                    if let Some(span) = front_matter::key_span(text, &["extract_last"]) {
                        differs = differs.at(span);
                    }
                    diagnostics.push(differs);
                }
                kept.insert(key.clone(), value.clone());
            }
            "defaults" => {
                for (name, default) in value.as_object().into_iter().flatten() {
                    // `llm` always fills `$input` with the text it is given (empty when none),
                    // so a default for it is never used (our own exports keep theirs).
                    if name == INPUT && extras.is_none() {
                        let what = format!(
                            "`llm` fills `${INPUT}` with the text it is given, so this default is never used: left out (the input stays required)"
                        );
                        let mut located = 0;
                        diagnostics.push(front_matter::dropped_key(
                            text,
                            &["defaults", INPUT],
                            what,
                            &mut located,
                        ));
                        continue;
                    }
                    defaults.insert(name.clone(), json!(text_of(default)));
                }
            }
            _ => {
                if OTHER_FIELDS.contains(&key.as_str()) && extras.is_none() {
                    diagnostics.push(Diagnostic::new(
                        &DROPPED_FIELD,
                        format!(
                            "`{key}` is not used by llmtool: it is kept under `metadata.{KEPT_FIELDS}` and written back on export"
                        ),
                    ));
                }
                kept.insert(key.clone(), value.clone());
            }
        }
    }
    if !kept.is_empty() {
        metadata.insert(KEPT_FIELDS.into(), Value::Object(kept));
    }
    let mut variables: Vec<Value> = Vec::new();
    for part in &parts {
        let syntax::Part::Variable { name, .. } = part else { continue };
        if variables.iter().any(|v| v["name"] == json!(name)) {
            continue;
        }
        let mut default = defaults.remove(name);
        if appends_input && name == INPUT {
            default.get_or_insert_with(|| json!(""));
        }
        variables.push(variable_json(name, VariableKind::Text, None, None, default));
    }
    for name in defaults.keys() {
        diagnostics.push(Diagnostic::new(
            &DROPPED_FIELD,
            format!("the default of `{name}` is left out: the prompt has no `${name}`"),
        ));
    }
    let variables = in_block_order(variables, extras.as_ref(), dollar::is_name);
    let builder = ToolBuilder::new(&parts, metadata, variables, Some((text, 0)))?.chat(is_chat);
    Ok(Converted { value: builder.finish(extras.as_ref()), diagnostics })
}

/// The `llmtool` block kept in the comment lines that start with `# llmtool:`, if any.
fn comment_block(text: &str) -> Result<Option<Value>, Box<Diagnostic>> {
    let mut lines = text.lines().skip_while(|line| line.trim_end() != COMMENT_HEADER).peekable();
    if lines.peek().is_none() {
        return Ok(None);
    }
    let mut yaml = String::new();
    for line in lines.map_while(|line| line.strip_prefix('#')) {
        yaml.push_str(line.strip_prefix(' ').unwrap_or(line));
        yaml.push('\n');
    }
    match yaml_read::from_str(&yaml) {
        Ok(Value::Object(mut block)) => Ok(block.remove("llmtool")),
        _ => Err(invalid("the `# llmtool:` comment block is not valid YAML")),
    }
}
