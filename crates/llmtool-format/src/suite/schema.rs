//! The test file format as a JSON Schema (draft 2020-12), published beside the tool schema
//! (`schema/llm-tool-tests.schema.json`) for editors. What a schema cannot tell (a regular
//! expression that does not compile, values against the tool) is left to `llmtool check`.

use serde_json::{Value, json};

use super::model::{ASSERTION_TYPES, Metric};

/// The `$id` the schema is published under.
pub const TESTS_SCHEMA_ID: &str = "https://llmtool.dev/schema/llm-tool-tests.schema.json";

/// The schema document.
pub fn tests_json_schema() -> Value {
    let fraction = json!({ "type": "number", "minimum": 0, "maximum": 1 });
    let text_value =
        json!({ "properties": { "value": { "type": "string" } }, "required": ["value"] });
    let count_value = json!({ "properties": { "value": { "type": "integer", "minimum": 0 } }, "required": ["value"] });
    let when = |kind: &str, then: Value| json!({ "if": { "properties": { "type": { "const": kind } } }, "then": then });
    let mut rules = Vec::new();
    for kind in ["equals", "contains", "not_contains", "regex", "starts_with", "similar"] {
        rules.push(when(kind, text_value.clone()));
    }
    for kind in ["max_length", "max_tokens", "max_latency_ms"] {
        rules.push(when(kind, count_value.clone()));
    }
    rules.push(when("one_of", json!({ "properties": { "value": { "type": "array", "items": { "type": "string" }, "minItems": 1 } }, "required": ["value"] })));
    rules.push(when("max_cost", json!({ "properties": { "value": { "type": "number", "minimum": 0 } }, "required": ["value"] })));
    rules.push(when("json_schema", json!({ "properties": { "value": { "type": ["object", "boolean"] } }, "required": ["value"] })));
    rules.push(when("json_path", json!({ "required": ["path", "value"] })));
    rules.push(when("image_size", json!({ "properties": { "value": { "type": "string", "pattern": format!("^{}$", crate::output::IMAGE_SIZE_PATTERN) } }, "required": ["value"] })));
    rules.push(when("image_format", json!({ "properties": { "value": { "enum": crate::output::IMAGE_FORMATS } }, "required": ["value"] })));
    rules.push(when(
        "judge",
        json!({ "anyOf": [{ "required": ["rubric"] }, { "required": ["value"] }] }),
    ));
    let assertion = json!({
        "type": "object",
        "description": "What a run's answer must satisfy.",
        "required": ["type"],
        "properties": {
            "type": { "enum": ASSERTION_TYPES },
            "value": { "description": "What the answer is compared with (see each type)." },
            "weight": { "type": "number", "minimum": 0, "description": "Its share of the case's score (default 1)." },
            "ignore_case": { "type": "boolean", "description": "For contains and not_contains." },
            "path": { "type": "string", "description": "For json_path: an RFC 9535 JSON path, like `$.answer`." },
            "metric": { "enum": Metric::NAMES, "description": "For similar (default levenshtein)." },
            "threshold": { "allOf": [fraction.clone()], "description": "For similar (default 0.8) and judge (default 0.5): the lowest score that passes." },
            "rubric": { "type": "string", "description": "For judge: what a good answer does." },
            "model": { "type": "string", "description": "For judge: the judge model (default: the local model)." }
        },
        "allOf": rules,
        "additionalProperties": false
    });
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": TESTS_SCHEMA_ID,
        "title": "Tests of an LLM tool",
        "description": "Cases of values for a tool's variables, each with assertions its answers must pass.",
        "type": "object",
        "required": ["cases"],
        "properties": {
            "$schema": { "type": "string" },
            "description": { "type": "string" },
            "tool": { "type": "string", "description": "The tool's path, relative to this file (default: NAME.json beside NAME.tests.json)." },
            "threshold": { "allOf": [fraction.clone()], "description": "The share of each case's weighted assertions a run must pass (default 1)." },
            "assert": { "type": "array", "items": { "$ref": "#/$defs/assertion" }, "description": "Assertions every case gets." },
            "cases": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": { "type": "string" },
                        "description": { "type": "string" },
                        "vars": { "type": "object", "description": "A value for each variable (a list for a multi-select)." },
                        "assert": { "type": "array", "items": { "$ref": "#/$defs/assertion" } },
                        "threshold": fraction
                    },
                    "additionalProperties": false
                }
            }
        },
        "additionalProperties": false,
        "$defs": { "assertion": assertion }
    })
}
