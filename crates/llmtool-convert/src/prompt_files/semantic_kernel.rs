//! Semantic Kernel's prompt function: a folder named after the function, holding
//! `config.json` (description, execution settings, input variables) and `skprompt.txt` (the
//! prompt in Semantic Kernel's template language). Semantic Kernel ignores keys it does not
//! know in `config.json`, so what it has no field for goes under an `llmtool` key there.

use serde_json::{Map, Value, json};

use super::syntax::{self, Slots, semantic_kernel as sk};
use super::{
    ToolBuilder, ToolSource, default_json, empty_default, invalid, semantic_kernel_messages,
    single_model, variable_json,
};
use crate::codes::{
    DROPPED_FIELD, INVALID_SOURCE, PEER_RENDERS_DIFFERENTLY, UNSUPPORTED_PARAMETER,
};
use crate::function::Converted;
use llmtool_format::diagnostic::Diagnostic;
use llmtool_format::document::Document;
use llmtool_format::model::VariableKind;
use llmtool_format::naming;
use llmtool_format::template::{LIST_SEPARATOR, Piece};

/// The file with the function's settings.
pub const CONFIG_FILE: &str = "config.json";
/// The file with the prompt template.
pub const PROMPT_FILE: &str = "skprompt.txt";

/// The execution settings every AI service uses, under `execution_settings`.
const DEFAULT_SERVICE: &str = "default";
/// The execution setting that names the model.
const MODEL_ID: &str = "model_id";

/// A prompt function: its folder's name and the two files in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SemanticKernelFunction {
    /// The function's name, which is the folder's name: `[0-9A-Za-z_]+`.
    pub name: String,
    /// The text of `config.json`.
    pub config: String,
    /// The text of `skprompt.txt`.
    pub prompt: String,
}

/// Whether `name` can name a Semantic Kernel function.
pub fn is_function_name(name: &str) -> bool {
    sk::is_name(name)
}

/// Writes the tool of `document` (which must have no errors) as a prompt function named
/// `name`, or a name made from `prompt_name`.
pub fn write(document: &Document, name: Option<&str>) -> Converted<SemanticKernelFunction> {
    let Some(source) = ToolSource::new(document) else {
        let problem = Diagnostic::new(&INVALID_SOURCE, "the tool file has errors");
        let empty = SemanticKernelFunction {
            name: String::new(),
            config: String::new(),
            prompt: String::new(),
        };
        return Converted { value: empty, diagnostics: vec![problem] };
    };
    let mut diagnostics = Vec::new();
    let (names, renamed) = source.template_names(sk::is_name, &mut diagnostics);
    check_rendering(&source, &mut diagnostics);
    let name = name.map_or_else(
        || naming::slug(source.metadata_text("prompt_name").unwrap_or("tool"), naming::MAX_NAME),
        str::to_owned,
    );
    let mut config = Map::new();
    config.insert("schema".into(), json!(1));
    config.insert("type".into(), json!("completion"));
    config.insert("name".into(), json!(name));
    if let Some(description) = source.metadata_text("description") {
        config.insert("description".into(), json!(description));
    }
    let mut mapped = vec!["description", "parameters"];
    let mut settings = Map::new();
    if let Some(model) = single_model(source.metadata().get("model_version")) {
        settings.insert(MODEL_ID.into(), json!(model));
        mapped.push("model_version");
    }
    if let Some(Value::Object(parameters)) = source.metadata().get("parameters") {
        settings.extend(parameters.clone());
    }
    if !settings.is_empty() {
        config.insert("execution_settings".into(), json!({ DEFAULT_SERVICE: settings }));
    }
    let inputs: Vec<Value> =
        source.variables().iter().zip(&names).map(|(v, name)| input_variable(v, name)).collect();
    if !inputs.is_empty() {
        config.insert("input_variables".into(), Value::Array(inputs));
    }
    let extras = source.extras(&mapped, renamed || has_selects(&source));
    if !extras.is_empty() {
        config.insert("llmtool".into(), Value::Object(extras));
    }
    let slots = Slots { names: &names, kinds: source.variables().iter().map(|v| v.kind).collect() };
    let mut config = serde_json::to_string_pretty(&config).unwrap_or_default();
    config.push('\n');
    // A chat is written as Semantic Kernel's messages; any other prompt as its text.
    let prompt = match source.template.turn_pieces() {
        Some(turns) => semantic_kernel_messages::write(turns, &slots),
        None => sk::write(source.pieces(), &slots),
    };
    let function = SemanticKernelFunction { name, config, prompt };
    Converted { value: function, diagnostics }
}

/// Warnings for prompts that Semantic Kernel's chat services change: the rendered prompt is
/// trimmed, then parsed for `<message>` tags, and HTML entities in it are decoded.
fn check_rendering(source: &ToolSource, diagnostics: &mut Vec<Diagnostic>) {
    if source.template.is_chat() {
        // Its turns are written as messages, their text encoded: sent as they are.
        return;
    }
    let prompt = source.json.get("model_prompt").and_then(Value::as_str).unwrap_or("");
    if prompt.trim() != prompt {
        diagnostics.push(Diagnostic::new(
            &PEER_RENDERS_DIFFERENTLY,
            "Semantic Kernel trims the blanks and newlines at the start and end of the prompt",
        ));
    }
    let literal: String = source
        .pieces()
        .filter_map(|piece| match piece {
            Piece::Literal(text) => Some(text),
            Piece::Slot(_) => None,
        })
        .collect();
    if literal.contains("<message") || literal.contains("<chat_history") {
        diagnostics.push(Diagnostic::new(
            &PEER_RENDERS_DIFFERENTLY,
            "Semantic Kernel reads `<message>` and `<chat_history>` tags in the prompt as separate messages",
        ));
    }
    if has_entity(&literal) {
        diagnostics.push(Diagnostic::new(
            &PEER_RENDERS_DIFFERENTLY,
            "Semantic Kernel decodes what reads as an HTML entity in the prompt (`&amp;` becomes `&`) before sending it",
        ));
    }
}

/// Whether `text` holds an HTML character reference: `&name;`, `&#123;` or `&#x1F;`.
fn has_entity(text: &str) -> bool {
    text.match_indices('&').any(|(at, _)| {
        let rest = &text[at + 1..];
        let body = rest.split(';').next().unwrap_or("");
        rest.len() > body.len()
            && !body.is_empty()
            && body.len() <= 32
            && (body.chars().all(|c| c.is_ascii_alphanumeric())
                || body.strip_prefix('#').is_some_and(|n| {
                    let n = n.strip_prefix(['x', 'X']).unwrap_or(n);
                    !n.is_empty() && n.chars().all(|c| c.is_ascii_hexdigit())
                }))
    })
}

/// Whether a variable is a select, whose kind and allowed values only the `llmtool` key keeps
/// whole (a multi-select is text to Semantic Kernel).
fn has_selects(source: &ToolSource) -> bool {
    source.variables().iter().any(|v| v.kind != VariableKind::Text)
}

fn input_variable(variable: &llmtool_format::template::VariableSpec, name: &str) -> Value {
    let mut input = Map::new();
    input.insert("name".into(), json!(name));
    if let Some(description) = &variable.description {
        input.insert("description".into(), json!(description));
    }
    let default = default_json(variable);
    if let Some(default) = &default {
        // Semantic Kernel takes text defaults only: a list is joined as `render` joins it.
        let text = match default {
            Value::Array(items) => {
                items.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(LIST_SEPARATOR)
            }
            other => other.as_str().unwrap_or_default().to_owned(),
        };
        input.insert("default".into(), json!(text));
    }
    input.insert("is_required".into(), json!(default.is_none()));
    if variable.kind == VariableKind::SingleSelect {
        let schema = json!({ "type": "string", "enum": variable.allowed_values });
        input.insert("json_schema".into(), json!(schema.to_string()));
    }
    Value::Object(input)
}

/// Writes the tool of `document` as a Semantic Kernel prompt template in one YAML file: the
/// settings of `config.json`, with the function's `name`, its `template` and
/// `template_format: semantic-kernel`.
pub fn write_yaml(document: &Document, name: Option<&str>) -> Converted<String> {
    let written = write(document, name);
    let Ok(Value::Object(config)) = serde_json::from_str::<Value>(&written.value.config) else {
        return Converted { value: String::new(), diagnostics: written.diagnostics };
    };
    let mut template = Map::new();
    template.insert("name".into(), json!(written.value.name));
    template.insert("template".into(), json!(written.value.prompt));
    template.insert("template_format".into(), json!("semantic-kernel"));
    template.extend(config.into_iter().filter(|(key, _)| key != "name"));
    Converted { value: super::yaml::document(&template), diagnostics: written.diagnostics }
}

/// What stops a prompt function from being read, and which of its two files it is in
/// ([`CONFIG_FILE`] or [`PROMPT_FILE`]): the diagnostic's places are in that file's text.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionProblem {
    pub file: &'static str,
    pub diagnostic: Box<Diagnostic>,
}

/// Reads a prompt function from the texts of its `config.json` and `skprompt.txt`, as a tool
/// file (canonical text). `folder` is the folder's name, which names the function when
/// `config.json` does not. The warnings' places are in `config.json`.
pub fn read(
    config_text: &str,
    prompt: &str,
    folder: Option<&str>,
) -> Result<Converted<String>, FunctionProblem> {
    let in_config = |diagnostic| FunctionProblem { file: CONFIG_FILE, diagnostic };
    let config: Map<String, Value> = match serde_json::from_str(config_text) {
        Ok(Value::Object(config)) => config,
        Ok(_) => return Err(in_config(invalid(format!("`{CONFIG_FILE}` is not a JSON object")))),
        Err(error) => {
            let what = format!("`{CONFIG_FILE}` is ");
            return Err(in_config(Box::new(crate::detect::not_json(config_text, &what, &error))));
        }
    };
    let format = config.get("template_format").and_then(Value::as_str).unwrap_or(SK_FORMAT);
    let parts = read_template(prompt, format).map_err(|problem| {
        // Only `template_format` can be wrong here: point at its value.
        let tree = llmtool_format::syntax::parse(config_text);
        let value = tree.root.as_ref().and_then(|root| root.get("template_format"));
        in_config(match value {
            Some(member) => Box::new((*problem).at(member.value.span)),
            None => problem,
        })
    })?;
    let parts = parts.map_err(|error| FunctionProblem {
        file: PROMPT_FILE,
        diagnostic: super::template_problem(
            prompt,
            0,
            &format!("`{PROMPT_FILE}` ({format})"),
            error,
        ),
    })?;
    read_config(&config, &parts, folder).map_err(in_config)
}

/// The template language Semantic Kernel uses when `template_format` names none.
const SK_FORMAT: &str = "semantic-kernel";

/// Reads `template` in the language `format` names (`template_format`): `semantic-kernel`,
/// `handlebars`, or `liquid` and `jinja2` (read with the Jinja reader, whose variables and
/// `join` filter Liquid shares); another name is an error.
fn read_template(
    template: &str,
    format: &str,
) -> Result<Result<Vec<syntax::Part>, syntax::TemplateError>, Box<Diagnostic>> {
    Ok(match format {
        SK_FORMAT => sk::read(template),
        "handlebars" => syntax::handlebars::read(template),
        "liquid" | "jinja2" => syntax::jinja::read(template),
        other => {
            return Err(invalid(format!(
                "`template_format: {other}` is not a template language llmtool reads (semantic-kernel, handlebars, liquid, jinja2)"
            )));
        }
    })
}

/// Reads a prompt template written as one YAML file (`name`, `template`, `template_format`,
/// `input_variables`, `execution_settings`...), as a tool file (canonical text). The template
/// is read in the language `template_format` names: `semantic-kernel` (the default),
/// `handlebars`, or `liquid` and `jinja2` (read with the Jinja reader, whose variables and
/// filters Liquid shares).
pub fn read_yaml(text: &str) -> Result<Converted<String>, Box<Diagnostic>> {
    // The places of problems are in `text`, a byte-order mark included.
    let unmarked = text.strip_prefix('\u{feff}').unwrap_or(text);
    let marked = text.len() - unmarked.len();
    let converted = read_unmarked_yaml(unmarked).map_err(|p| Box::new(p.shifted(marked)))?;
    let diagnostics = converted.diagnostics.into_iter().map(|d| d.shifted(marked)).collect();
    Ok(Converted { value: converted.value, diagnostics })
}

fn read_unmarked_yaml(text: &str) -> Result<Converted<String>, Box<Diagnostic>> {
    let config = match super::yaml_read::from_str(text) {
        Ok(Value::Object(config)) => config,
        Ok(_) => return Err(invalid("the prompt template is not a YAML mapping")),
        Err(error) => {
            return Err(super::yaml_read::problem(text, text, "the prompt template", &error));
        }
    };
    let Some(template) = config.get("template").and_then(Value::as_str) else {
        let problem = invalid("the prompt template has no `template` text");
        return Err(match first_line(text) {
            Some(line) => Box::new(problem.at_labelled(line, "a mapping with no `template` key")),
            None => problem,
        });
    };
    let format = config.get("template_format").and_then(Value::as_str).unwrap_or(SK_FORMAT);
    let parts = read_template(template, format)?;
    let parts = parts
        .map_err(|e| super::template_problem(text, 0, &format!("the `{format}` template"), e))?;
    read_config(&config, &parts, None)
}

/// The first line of `text` that is neither blank nor a comment.
fn first_line(text: &str) -> Option<llmtool_format::span::Span> {
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let content = line.trim_end();
        let trimmed = content.trim_start();
        if !trimmed.is_empty() && !trimmed.starts_with('#') && trimmed != "---" {
            let indent = content.len() - trimmed.len();
            return Some(llmtool_format::span::Span::new(start + indent, start + content.len()));
        }
        start += line.len();
    }
    None
}

/// The tool of a prompt function whose settings are `config` and whose template is `parts`.
fn read_config(
    config: &Map<String, Value>,
    parts: &[syntax::Part],
    folder: Option<&str>,
) -> Result<Converted<String>, Box<Diagnostic>> {
    let mut diagnostics = Vec::new();
    let mut metadata = Map::new();
    let name = config.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()).or(folder);
    if let Some(name) = name {
        metadata.insert("prompt_name".into(), json!(name));
    }
    if let Some(description) = config.get("description").filter(|d| d.is_string()) {
        metadata.insert("description".into(), description.clone());
    }
    if let Some(Value::Object(services)) = config.get("execution_settings") {
        let chosen = services.get(DEFAULT_SERVICE).or_else(|| services.values().next());
        if let Some(Value::Object(settings)) = chosen {
            let mut parameters = settings.clone();
            if let Some(Value::String(model)) = parameters.remove(MODEL_ID) {
                metadata.insert("model_version".into(), json!(model));
            }
            if !parameters.is_empty() {
                metadata.insert("parameters".into(), Value::Object(parameters));
            }
        }
        if services.len() > 1 {
            diagnostics.push(Diagnostic::new(
                &DROPPED_FIELD,
                "the execution settings of services other than `default` are left out: a tool has one set of parameters",
            ));
        }
    }
    let mut variables = Vec::new();
    for input in config.get("input_variables").and_then(Value::as_array).into_iter().flatten() {
        variables.push(read_input(input, &mut diagnostics)?);
    }
    // Semantic Kernel also takes variables the template uses but does not declare.
    for part in parts {
        if let syntax::Part::Variable { name, .. } = part
            && !variables.iter().any(|v| v["name"].as_str() == Some(name))
        {
            variables.push(variable_json(name, VariableKind::Text, None, None, None));
        }
    }
    // A template of `<message>` elements is the chat Semantic Kernel sends.
    let builder = match semantic_kernel_messages::read(parts, &mut diagnostics)? {
        Some(messages) => {
            ToolBuilder::new(&messages.parts, metadata, variables, None)?.chat(messages.is_chat)
        }
        None => ToolBuilder::new(parts, metadata, variables, None)?,
    };
    let tool = builder.finish(config.get("llmtool"));
    Ok(Converted { value: super::canonical(&tool), diagnostics })
}

fn read_input(input: &Value, diagnostics: &mut Vec<Diagnostic>) -> Result<Value, Box<Diagnostic>> {
    let Some(name) = input["name"].as_str() else {
        return Err(invalid("an input variable has no `name`"));
    };
    let schema: Option<Value> = match &input["json_schema"] {
        Value::String(text) => serde_json::from_str(text).ok(),
        Value::Object(_) => Some(input["json_schema"].clone()),
        _ => None,
    };
    let allowed = schema.as_ref().and_then(|s| s["enum"].as_array()).cloned();
    let kind = if allowed.is_some() { VariableKind::SingleSelect } else { VariableKind::Text };
    if let Some(other) = schema.as_ref().and_then(|s| s["type"].as_str()).filter(|t| *t != "string")
    {
        diagnostics.push(Diagnostic::new(
            &UNSUPPORTED_PARAMETER,
            format!("input variable `{name}` is `{other}`: read as text"),
        ));
    }
    let required = input["is_required"].as_bool().unwrap_or(true);
    let default = match &input["default"] {
        Value::String(text) if !text.is_empty() || !required => Some(json!(text)),
        Value::Null | Value::String(_) => empty_default(kind, required),
        other => Some(json!(other.to_string())),
    };
    Ok(variable_json(name, kind, input["description"].as_str(), allowed, default))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warnings(prompt: &str) -> Vec<String> {
        let text =
            serde_json::json!({ "model_prompt": prompt, "metadata": { "prompt_name": "x" } });
        let document = Document::from_text(text.to_string());
        write(&document, None).diagnostics.into_iter().map(|d| d.message).collect()
    }

    #[test]
    fn what_semantic_kernel_changes_is_said() {
        assert!(warnings("Plain text & more < less.").is_empty());
        assert!(warnings(" Leading blank")[0].contains("trims"));
        assert!(warnings("A <message role=\"system\">x</message>")[0].contains("<message>"));
        assert!(warnings("Fish &amp; chips")[0].contains("HTML entity"));
        assert!(warnings("&#x41; and &#65;")[0].contains("HTML entity"));
        assert!(warnings("AT & T; &; &#; &#xZ;").is_empty());
    }
}
