//! The format as a JSON Schema (draft 2020-12), for editors and other validators.
//!
//! It accepts exactly the files that `llmtool check` reads without errors as far as a schema can
//! tell: both avatar shapes, `model_version` as a string or a list, numbers written as strings
//! in `parameters`, the translated type names, unknown keys. Checks a schema cannot express
//! (placeholders against variables, defaults against allowed values, decoding the avatar) are
//! left to `llmtool check`.

use serde_json::{Value, json};

use crate::model::VariableKind;
use crate::model::keys::{BUILTIN_FUNCTIONS, DLP_POLICIES, PARAMETER_RANGES as RANGES};
use crate::output::IMAGE_SIZE_PATTERN;

/// The translated variable type names the Spanish and Korean editions use.
const TRANSLATED_TYPES: [&str; 8] = [
    "texto",
    "selección-única",
    "seleccion-unica",
    "selección-múltiple",
    "seleccion-multiple",
    "텍스트",
    "단일 선택",
    "다중 선택",
];

/// The `$id` the schema is published under.
pub const SCHEMA_ID: &str = "https://llmtool.dev/schema/llm-tool.schema.json";

/// The schema document.
pub fn json_schema() -> Value {
    let strings = json!({ "type": "array", "items": { "type": "string" } });
    let mut type_names: Vec<&str> = VariableKind::ALL.iter().map(|k| k.as_str()).collect();
    type_names.extend(TRANSLATED_TYPES);
    let mut parameters = serde_json::Map::new();
    for (name, low, high) in RANGES {
        parameters
            .insert(name.to_owned(), number_parameter(json!({ "minimum": low, "maximum": high })));
    }
    parameters.insert(
        "max_tokens".to_owned(),
        number_parameter(json!({ "type": "integer", "minimum": 1 })),
    );
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "LLM tool",
        "description": "A portable prompt tool: a model prompt with {{variable}} placeholders and its metadata; or a smart tool, whose Python tool_code gives the answer.",
        "type": "object",
        "anyOf": [
            { "required": ["model_prompt"] },
            { "required": ["tool_code"] },
            { "required": ["metadata"], "properties": { "metadata": { "required": ["tool_code"] } } }
        ],
        "properties": {
            "version": { "description": "The version of the file, kept as written.", "type": ["string", "integer"] },
            "model_prompt": { "description": "The prompt, with {{name}} placeholders for the variables.", "type": "string" },
            "tool_code": { "description": "A smart tool's Python code, defining execute(variables); run only when asked, in llmtool's sandbox.", "type": "string" },
            "metadata": { "$ref": "#/$defs/metadata" },
            "x-dlp": {
                "description": "What runs do with sensitive values found in the prompt (llmtool's data-loss prevention).",
                "enum": DLP_POLICIES
            },
            "x-chat": {
                "description": "Whether the prompt is a chat: split at its role lines (system:, developer:, user:, assistant:, each alone on a line) and sent as messages.",
                "type": "boolean"
            }
        },
        "$defs": {
            "metadata": {
                "type": "object",
                "properties": {
                    "tool_name": { "description": "A smart tool's name.", "type": "string" },
                    "tool_code": { "description": "A smart tool's Python code, defining execute(variables); run only when asked, in llmtool's sandbox.", "type": "string" },
                    "requirements": {
                        "description": "A smart tool's packages from PyPI, each pinned (name==version); or one string with one a line.",
                        "anyOf": [{ "type": "string" }, strings]
                    },
                    "prompt_name": { "description": "A short name for the tool.", "type": "string" },
                    "description": { "description": "What the tool does.", "type": "string" },
                    "usage_notes": { "description": "Free-form notes on using the tool.", "type": "string" },
                    "model_version": {
                        "description": "The models the prompt was written for.",
                        "anyOf": [{ "type": "string" }, strings]
                    },
                    "creator": {
                        "type": "object",
                        "properties": {
                            "name": { "type": "string" },
                            "email": { "type": "string", "format": "email" },
                            "organization": { "type": "string" }
                        }
                    },
                    "parameters": { "type": "object", "properties": parameters },
                    "variables": { "type": "array", "items": { "$ref": "#/$defs/variable" } },
                    "expected_output": {
                        "description": "What the answer must be: an object, or (as smart tools write it) the type alone.",
                        "anyOf": [{ "type": "string" }, { "$ref": "#/$defs/expected_output" }]
                    },
                    "avatar_type": { "enum": ["url", "base64"] },
                    "avatar": {
                        "description": "A URL or base64 image (256x256 recommended), or an object holding avatar_type and avatar.",
                        "anyOf": [
                            { "type": "string" },
                            {
                                "type": "object",
                                "properties": { "avatar_type": { "enum": ["url", "base64"] }, "avatar": { "type": "string" } }
                            }
                        ]
                    },
                    "timestamp": { "description": "When the tool was last changed (ISO 8601).", "type": "string" },
                    "functions": {
                        "description": "What the model may call during a run (an llmtool extension): a built-in function, a library tool, or an MCP server's function.",
                        "type": "array",
                        "items": { "$ref": "#/$defs/function" }
                    }
                }
            },
            "function": {
                "type": "object",
                "properties": {
                    "builtin": { "enum": BUILTIN_FUNCTIONS },
                    "database": { "description": "The database a query_database reads, by name.", "type": "string" },
                    "tool": { "description": "A library tool: registry:SLUG or registry:SLUG@VERSION.", "type": "string", "pattern": "^registry:[^@]+(@.+)?$" },
                    "mcp": { "description": "An MCP server the operator configured, by name.", "type": "string" },
                    "name": { "description": "The MCP server's function.", "type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_-]{0,63}$" }
                },
                "oneOf": [
                    { "required": ["builtin"], "not": { "anyOf": [{ "required": ["tool"] }, { "required": ["mcp"] }, { "required": ["name"] }] } },
                    { "required": ["tool"], "not": { "anyOf": [{ "required": ["mcp"] }, { "required": ["database"] }, { "required": ["name"] }] } },
                    { "required": ["mcp", "name"], "not": { "required": ["database"] } }
                ],
                "if": { "required": ["builtin"], "properties": { "builtin": { "const": "query_database" } } },
                "then": { "required": ["database"] }
            },
            "variable": {
                "type": "object",
                "properties": {
                    "name": { "type": "string", "pattern": "^(?!\\s*$)(?!.*\\{\\{)(?!.*\\}\\})" },
                    "type": { "enum": type_names },
                    "description": { "type": "string" },
                    "default": { "anyOf": [{ "type": "string" }, { "type": "array", "items": { "type": "string" }, "uniqueItems": true }] },
                    "allowed_values": { "type": "array", "items": { "type": "string" }, "uniqueItems": true }
                },
                "allOf": [{
                    "if": { "required": ["type"], "properties": { "type": { "not": { "enum": ["text", "texto", "텍스트"] } } } },
                    "then": { "required": ["allowed_values"], "properties": { "allowed_values": { "minItems": 1 } } }
                }]
            },
            "expected_output": {
                "type": "object",
                "properties": {
                    "type": { "description": "text, code, limited or image.", "type": "string" },
                    "format": { "description": "JSON, XML, CSV, ... (any case); for an image, png, jpeg or webp.", "type": "string" },
                    "language": { "description": "The language of code output.", "type": "string" },
                    "allowed_values": { "type": "array", "items": { "type": "string" }, "uniqueItems": true },
                    "size": { "description": "An image's size: WIDTHxHEIGHT or auto.", "type": "string", "pattern": format!("^(auto|{IMAGE_SIZE_PATTERN})$") }
                },
                "if": { "required": ["type"], "properties": { "type": { "const": "limited" } } },
                "then": { "required": ["allowed_values"], "properties": { "allowed_values": { "minItems": 1 } } }
            }
        }
    })
}

/// A parameter: a number within `bounds`, or (with a warning from `check`) a string holding one.
fn number_parameter(bounds: Value) -> Value {
    let mut number = json!({ "type": "number" });
    if let (Some(number), Value::Object(bounds)) = (number.as_object_mut(), bounds) {
        number.extend(bounds);
    }
    json!({ "anyOf": [number, { "type": "string", "pattern": "^\\s*-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?\\s*$" }] })
}
