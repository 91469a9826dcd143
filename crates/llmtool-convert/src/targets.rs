//! Function tools written in each API's own shape, and read back from it.

use serde_json::{Map, Value, json};

use super::codes::{INVALID_SOURCE, REWRITTEN_SCHEMA};
use super::function::FunctionTool;
use llmtool_format::diagnostic::Diagnostic;

/// The function-tool formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FunctionFormat {
    /// A Chat Completions `tools` entry: `{"type": "function", "function": {...}}`.
    OpenAi,
    /// A Responses API function tool: `{"type": "function", "name": ...}`.
    OpenAiResponses,
    /// An Anthropic Messages tool: `name`, `description`, `input_schema`.
    Anthropic,
    /// A Gemini function declaration, its `parameters` in Gemini's OpenAPI subset.
    Gemini,
    /// An MCP tool: `name`, `title`, `description`, `inputSchema`.
    McpTool,
    /// An AWS Bedrock Converse tool: `{"toolSpec": {name, description, inputSchema: {json}}}`.
    Bedrock,
    /// The parameters alone, as a JSON Schema 2020-12 document.
    JsonSchema,
}

impl FunctionFormat {
    pub const ALL: [FunctionFormat; 7] = [
        FunctionFormat::OpenAi,
        FunctionFormat::OpenAiResponses,
        FunctionFormat::Anthropic,
        FunctionFormat::Gemini,
        FunctionFormat::McpTool,
        FunctionFormat::Bedrock,
        FunctionFormat::JsonSchema,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            FunctionFormat::OpenAi => "openai",
            FunctionFormat::OpenAiResponses => "openai-responses",
            FunctionFormat::Anthropic => "anthropic",
            FunctionFormat::Gemini => "gemini",
            FunctionFormat::McpTool => "mcp-tool",
            FunctionFormat::Bedrock => "bedrock",
            FunctionFormat::JsonSchema => "json-schema",
        }
    }

    /// Writes `tool`. `strict` (OpenAI only) asks for strict schema adherence: every key
    /// required, optional ones nullable, no other keys allowed.
    pub fn write(self, tool: &FunctionTool, strict: bool) -> (Value, Vec<Diagnostic>) {
        let mut diagnostics = Vec::new();
        let openai_parameters = |diagnostics: &mut Vec<Diagnostic>| {
            if strict {
                strict_schema(&tool.parameters, diagnostics)
            } else {
                tool.parameters.clone()
            }
        };
        let value = match self {
            FunctionFormat::OpenAi => {
                let mut function = json!({
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": openai_parameters(&mut diagnostics),
                });
                if strict {
                    function["strict"] = Value::Bool(true);
                }
                json!({ "type": "function", "function": function })
            }
            // The Responses API takes `strict` as true when it is missing: always say it.
            FunctionFormat::OpenAiResponses => json!({
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": openai_parameters(&mut diagnostics),
                "strict": strict,
            }),
            FunctionFormat::Anthropic => json!({
                "name": tool.name,
                "description": tool.description,
                "input_schema": tool.parameters,
            }),
            FunctionFormat::Gemini => json!({
                "name": tool.name,
                "description": tool.description,
                "parameters": gemini_schema(&tool.parameters, "parameters", &mut diagnostics),
            }),
            FunctionFormat::McpTool => {
                let mut out = json!({ "name": tool.name });
                if let Some(title) = &tool.title {
                    out["title"] = Value::String(title.clone());
                }
                out["description"] = Value::String(tool.description.clone());
                out["inputSchema"] = tool.parameters.clone();
                out
            }
            FunctionFormat::Bedrock => json!({
                "toolSpec": {
                    "name": tool.name,
                    "description": tool.description,
                    "inputSchema": { "json": tool.parameters },
                }
            }),
            FunctionFormat::JsonSchema => {
                let mut out = json!({ "$schema": "https://json-schema.org/draft/2020-12/schema" });
                out["title"] =
                    Value::String(tool.title.clone().unwrap_or_else(|| tool.name.clone()));
                out["description"] = Value::String(tool.description.clone());
                if let Value::Object(parameters) = &tool.parameters {
                    for (key, value) in parameters {
                        out[key] = value.clone();
                    }
                }
                out
            }
        };
        (value, diagnostics)
    }

    /// The format `value` is in, judged by its keys.
    pub fn detect(value: &Value) -> Option<FunctionFormat> {
        let object = value.as_object()?;
        let has = |key: &str| object.contains_key(key);
        Some(if has("toolSpec") {
            FunctionFormat::Bedrock
        } else if has("function") && object.get("type") == Some(&json!("function")) {
            FunctionFormat::OpenAi
        } else if object.get("type") == Some(&json!("function")) {
            FunctionFormat::OpenAiResponses
        } else if has("input_schema") {
            FunctionFormat::Anthropic
        } else if has("inputSchema") {
            FunctionFormat::McpTool
        } else if has("name") && (has("parameters") || has("parametersJsonSchema")) {
            FunctionFormat::Gemini
        } else if has("$schema") || has("properties") {
            FunctionFormat::JsonSchema
        } else {
            return None;
        })
    }

    /// Reads a tool written in this format.
    pub fn read(self, value: &Value) -> Result<FunctionTool, Box<Diagnostic>> {
        let invalid = |what: &str| {
            Box::new(Diagnostic::new(
                &INVALID_SOURCE,
                format!("not {} tool: {what}", article(self.name())),
            ))
        };
        let object = value.as_object().ok_or_else(|| invalid("expected a JSON object"))?;
        let (fields, schema_key) = match self {
            FunctionFormat::OpenAi => (
                object
                    .get("function")
                    .and_then(Value::as_object)
                    .ok_or_else(|| invalid("no `function` object"))?,
                "parameters",
            ),
            FunctionFormat::OpenAiResponses | FunctionFormat::Gemini => (object, "parameters"),
            FunctionFormat::Anthropic => (object, "input_schema"),
            FunctionFormat::McpTool => (object, "inputSchema"),
            FunctionFormat::Bedrock => {
                let spec = object
                    .get("toolSpec")
                    .and_then(Value::as_object)
                    .ok_or_else(|| invalid("no `toolSpec` object"))?;
                let name =
                    spec.get("name").and_then(Value::as_str).ok_or_else(|| invalid("no `name`"))?;
                // The schema is the `json` member of `inputSchema` (its only form).
                let parameters = match spec.get("inputSchema").map(|input| input.get("json")) {
                    Some(Some(Value::Object(schema))) => normalized(&Value::Object(schema.clone())),
                    Some(_) => return Err(invalid("`inputSchema` has no `json` object")),
                    None => json!({ "type": "object", "properties": {} }),
                };
                return Ok(FunctionTool {
                    name: name.to_owned(),
                    title: None,
                    description: text(spec, "description"),
                    parameters,
                    output: None,
                });
            }
            FunctionFormat::JsonSchema => {
                let name = object.get("title").and_then(Value::as_str).unwrap_or("tool");
                return Ok(FunctionTool {
                    name: super::naming::slug(name, super::naming::MAX_NAME),
                    title: object.get("title").and_then(Value::as_str).map(str::to_owned),
                    description: text(object, "description"),
                    parameters: schema_only(object),
                    output: None,
                });
            }
        };
        let name =
            fields.get("name").and_then(Value::as_str).ok_or_else(|| invalid("no `name`"))?;
        let parameters = match fields.get(schema_key).or_else(|| fields.get("parametersJsonSchema"))
        {
            Some(Value::Object(schema)) => normalized(&Value::Object(schema.clone())),
            Some(_) => return Err(invalid(&format!("`{schema_key}` is not an object"))),
            None => json!({ "type": "object", "properties": {} }),
        };
        Ok(FunctionTool {
            name: name.to_owned(),
            title: fields.get("title").and_then(Value::as_str).map(str::to_owned),
            description: text(fields, "description"),
            parameters,
            output: fields.get("outputSchema").filter(|schema| schema.is_object()).cloned(),
        })
    }
}

fn article(name: &str) -> String {
    if name.starts_with(['a', 'e', 'i', 'o']) { format!("an {name}") } else { format!("a {name}") }
}

fn text(object: &Map<String, Value>, key: &str) -> String {
    object.get(key).and_then(Value::as_str).unwrap_or_default().to_owned()
}

/// The schema keywords of a JSON Schema document, without its annotations about the document.
fn schema_only(object: &Map<String, Value>) -> Value {
    let mut schema = object.clone();
    for key in ["$schema", "$id", "title", "description"] {
        schema.remove(key);
    }
    normalized(&Value::Object(schema))
}

/// A schema with Gemini's upper-case type names (and `format: "enum"`) back in JSON Schema's
/// spelling, so every source reads the same way.
fn normalized(schema: &Value) -> Value {
    match schema {
        Value::Object(object) => {
            let mut out = Map::new();
            for (key, value) in object {
                match (key.as_str(), value) {
                    ("type", Value::String(name)) => {
                        out.insert(key.clone(), Value::String(name.to_ascii_lowercase()));
                    }
                    ("format", Value::String(format)) if format == "enum" => {}
                    ("properties", Value::Object(properties)) => {
                        let properties =
                            properties.iter().map(|(k, v)| (k.clone(), normalized(v))).collect();
                        out.insert(key.clone(), Value::Object(properties));
                    }
                    _ => {
                        out.insert(key.clone(), normalized(value));
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(normalized).collect()),
        other => other.clone(),
    }
}

/// OpenAI's strict mode: every property required, the optional ones nullable (a `null` added
/// to their type and enum), `additionalProperties: false`, `default` (which strict mode does
/// not take) moved into the description, and `uniqueItems` (nor that) left out.
fn strict_schema(schema: &Value, diagnostics: &mut Vec<Diagnostic>) -> Value {
    let mut out = schema.clone();
    let required: Vec<String> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    let Some(properties) = out.get_mut("properties").and_then(Value::as_object_mut) else {
        return out;
    };
    let mut all = Vec::new();
    for (key, property) in properties.iter_mut() {
        all.push(Value::String(key.clone()));
        let Some(property) = property.as_object_mut() else { continue };
        if let Some(default) = property.remove("default") {
            let shown = match &default {
                Value::Array(items) => items
                    .iter()
                    .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned))
                    .collect::<Vec<_>>()
                    .join(", "),
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            let description =
                property.get("description").and_then(Value::as_str).unwrap_or_default();
            let description = description.trim_end().trim_end_matches('.');
            let joined = if description.is_empty() {
                format!("Default: {shown}.")
            } else {
                format!("{description} (default: {shown}).")
            };
            property.insert("description".into(), Value::String(joined));
            diagnostics.push(Diagnostic::new(
                &REWRITTEN_SCHEMA,
                format!("strict mode has no `default`: the default of `{key}` is stated in its description"),
            ));
        }
        if property.remove("uniqueItems").is_some() {
            diagnostics.push(Diagnostic::new(
                &REWRITTEN_SCHEMA,
                format!("strict mode has no `uniqueItems`: left out of `{key}`"),
            ));
        }
        if !required.contains(key) {
            if let Some(Value::String(kind)) = property.get("type").cloned() {
                property.insert("type".into(), json!([kind, "null"]));
            }
            if let Some(Value::Array(values)) = property.get_mut("enum") {
                values.push(Value::Null);
            }
        }
    }
    out["required"] = Value::Array(all);
    out["additionalProperties"] = Value::Bool(false);
    out
}

/// Gemini's OpenAPI subset: upper-case type names, `format: "enum"` on string enums, and no
/// `uniqueItems` or `additionalProperties`.
fn gemini_schema(schema: &Value, path: &str, diagnostics: &mut Vec<Diagnostic>) -> Value {
    let Value::Object(object) = schema else { return schema.clone() };
    let mut out = Map::new();
    for (key, value) in object {
        match key.as_str() {
            "type" => {
                let name = value.as_str().unwrap_or("string").to_ascii_uppercase();
                out.insert(key.clone(), Value::String(name));
                if value == "string" && object.contains_key("enum") {
                    out.insert("format".into(), "enum".into());
                }
            }
            "uniqueItems" | "additionalProperties" => diagnostics.push(Diagnostic::new(
                &REWRITTEN_SCHEMA,
                format!("Gemini's schema has no `{key}`: left out of `{path}`"),
            )),
            "properties" => {
                let properties = value
                    .as_object()
                    .map(|p| {
                        p.iter()
                            .map(|(k, v)| {
                                (k.clone(), gemini_schema(v, &format!("{path}.{k}"), diagnostics))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                out.insert(key.clone(), Value::Object(properties));
            }
            "items" => {
                out.insert(
                    key.clone(),
                    gemini_schema(value, &format!("{path}.items"), diagnostics),
                );
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    Value::Object(out)
}

/// Reads an MCP prompt (`prompts/list` entry) as a function tool whose parameters are all
/// strings: MCP prompt arguments carry no type.
pub fn read_mcp_prompt(value: &Value) -> Result<FunctionTool, Box<Diagnostic>> {
    let invalid = |what: &str| {
        Box::new(Diagnostic::new(&INVALID_SOURCE, format!("not an mcp-prompt: {what}")))
    };
    let object = value.as_object().ok_or_else(|| invalid("expected a JSON object"))?;
    let name = object.get("name").and_then(Value::as_str).ok_or_else(|| invalid("no `name`"))?;
    let mut properties = Map::new();
    let mut required = Vec::new();
    for argument in object.get("arguments").and_then(Value::as_array).into_iter().flatten() {
        let Some(argument_name) = argument["name"].as_str() else {
            return Err(invalid("an argument has no `name`"));
        };
        let mut schema = json!({ "type": "string" });
        if let Some(description) = argument["description"].as_str() {
            schema["description"] = Value::String(description.to_owned());
        }
        if argument["required"].as_bool() == Some(true) {
            required.push(Value::String(argument_name.to_owned()));
        }
        properties.insert(argument_name.to_owned(), schema);
    }
    Ok(FunctionTool {
        name: name.to_owned(),
        title: object.get("title").and_then(Value::as_str).map(str::to_owned),
        description: text(object, "description"),
        parameters: json!({ "type": "object", "properties": properties, "required": required }),
        output: None,
    })
}
