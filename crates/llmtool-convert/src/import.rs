//! A function tool back to an LLM-tool file: parameters become variables where they can, and a
//! prompt is written that lists them.

use serde_json::{Map, Value, json};

use super::codes::{DROPPED_FIELD, UNSUPPORTED_PARAMETER};
use super::function::{Converted, FunctionTool};
use llmtool_format::diagnostic::Diagnostic;
use llmtool_format::format;

/// The tool file (canonical text) for `function`.
pub fn tool_file(function: &FunctionTool) -> Converted<String> {
    let converted = tool_value(function);
    let text = serde_json::to_string(&converted.value).unwrap_or_default();
    // The canonical printer orders the keys as every tool file is written.
    let text = format::format_source(&text, false).map_or(text, |f| f.text);
    Converted { value: text, diagnostics: converted.diagnostics }
}

/// The tool, as JSON, for `function`.
pub fn tool_value(function: &FunctionTool) -> Converted<Value> {
    let mut diagnostics = Vec::new();
    let parameters = super::plain_schema::plain(&function.parameters, &mut diagnostics);
    let required: Vec<&str> = parameters["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut variables = Vec::new();
    let mut lines = Vec::new();
    let empty = Map::new();
    let properties = parameters["properties"].as_object().unwrap_or(&empty);
    for (key, schema) in properties {
        let name = schema["title"].as_str().unwrap_or(key);
        match variable(name, schema, required.contains(&key.as_str())) {
            Ok((variable, note)) => {
                if let Some(note) = note {
                    diagnostics.push(Diagnostic::new(&UNSUPPORTED_PARAMETER, note));
                }
                variables.push(variable);
                lines.push(format!("{}: {{{{{name}}}}}", label(name)));
            }
            Err(kind) => {
                diagnostics.push(
                    Diagnostic::new(
                        &UNSUPPORTED_PARAMETER,
                        format!("parameter `properties.{key}` ({kind}) cannot be a variable"),
                    )
                    .with_help("it is listed in the prompt; variables are text, single-select or multi-select"),
                );
                lines.push(format!("{}: (not a variable: {kind})", label(name)));
            }
        }
    }
    let mut prompt = function.description.trim().to_owned();
    if !lines.is_empty() {
        if !prompt.is_empty() {
            prompt.push_str("\n\n");
        }
        prompt.push_str(&lines.join("\n"));
    }
    let mut metadata = Map::new();
    metadata.insert(
        "prompt_name".into(),
        Value::String(function.title.clone().unwrap_or_else(|| humanized(&function.name))),
    );
    if !function.description.is_empty() {
        metadata.insert("description".into(), Value::String(function.description.clone()));
    }
    metadata.insert("variables".into(), Value::Array(variables));
    if let Some(output) = &function.output {
        // The answer has a schema: it is JSON, whose shape a tool file does not describe.
        metadata.insert("expected_output".into(), json!({ "format": "JSON" }));
        let shape =
            output.get("properties").and_then(Value::as_object).map_or_else(String::new, |p| {
                let keys: Vec<&str> = p.keys().map(String::as_str).collect();
                format!(" (`{}`)", keys.join("`, `"))
            });
        diagnostics.push(Diagnostic::new(
            &DROPPED_FIELD,
            format!("the output schema{shape} is not carried: the tool expects a JSON answer, without its shape"),
        ));
    }
    Converted { value: json!({ "model_prompt": prompt, "metadata": metadata }), diagnostics }
}

/// A machine name as words: `get_weather` → `Get weather`.
fn humanized(name: &str) -> String {
    label(&name.replace(['_', '-'], " "))
}

/// `name` with its first letter upper-case, for the prompt's list.
fn label(name: &str) -> String {
    let mut chars = name.chars();
    chars.next().map_or_else(String::new, |first| first.to_uppercase().chain(chars).collect())
}

/// The variable for one parameter, with a note when something could not be kept; or, when it
/// has no variable type, what it is.
fn variable(name: &str, schema: &Value, required: bool) -> Result<(Value, Option<String>), String> {
    let kind = type_name(schema);
    let strings = |values: &Value| -> Option<Vec<Value>> {
        let values = values.as_array()?;
        values
            .iter()
            .filter(|v| !v.is_null())
            .map(|v| v.as_str().map(|s| Value::String(s.to_owned())))
            .collect()
    };
    let (type_name, allowed) = match kind.as_deref() {
        Some("string") => match schema.get("enum") {
            Some(values) => {
                ("single-select", Some(strings(values).ok_or("an enum of non-strings")?))
            }
            None => ("text", None),
        },
        Some("array") => {
            let items = &schema["items"];
            match (type_name(items).as_deref(), items.get("enum").and_then(strings)) {
                (Some("string"), Some(values)) => ("multi-select", Some(values)),
                (Some(item), _) => {
                    return Err(format!("an array of {item} without allowed values"));
                }
                (None, _) => return Err("an array of anything".into()),
            }
        }
        Some(other) => return Err(other.to_owned()),
        None => return Err("no type".into()),
    };
    let mut variable = Map::new();
    variable.insert("name".into(), Value::String(name.to_owned()));
    variable.insert("type".into(), Value::String(type_name.into()));
    if let Some(description) = schema["description"].as_str() {
        variable.insert("description".into(), Value::String(description.to_owned()));
    }
    if let Some(allowed) = allowed {
        variable.insert("allowed_values".into(), Value::Array(allowed));
    }
    let mut note = None;
    match schema.get("default") {
        Some(default) if !default.is_null() => {
            variable.insert("default".into(), default.clone());
        }
        _ if required => {}
        _ => match type_name {
            "text" => {
                variable.insert("default".into(), Value::String(String::new()));
            }
            "multi-select" => {
                variable.insert("default".into(), Value::Array(Vec::new()));
            }
            _ => {
                note = Some(format!(
                    "optional parameter `{name}` has no default; its variable is required"
                ));
            }
        },
    }
    Ok((Value::Object(variable), note))
}

/// The schema's type, `null` left out of a list of types (a nullable value); `string` for an
/// `enum` of strings that names no type.
fn type_name(schema: &Value) -> Option<String> {
    match &schema["type"] {
        Value::Null
            if schema["enum"].as_array().is_some_and(|values| {
                !values.is_empty() && values.iter().all(|v| v.is_string() || v.is_null())
            }) =>
        {
            Some("string".into())
        }
        Value::String(name) => Some(name.to_ascii_lowercase()),
        Value::Array(names) => {
            let names: Vec<&str> =
                names.iter().filter_map(Value::as_str).filter(|n| *n != "null").collect();
            (names.len() == 1).then(|| names[0].to_ascii_lowercase())
        }
        _ => None,
    }
}
