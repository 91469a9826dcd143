//! The elisp forms checked by Emacs itself: each form is evaluated in `emacs --batch` against
//! stand-ins that build request JSON the way gptel and llm.el do (`tests/emacs/request-json.el`),
//! and what Emacs serializes must equal the JSON Schema export, less what the package leaves out.
//!
//! Needs `emacs` (Debian's emacs-nox), which `scripts/test.sh` installs.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use llmtool_convert::{
    ElispFlavor, ElispOptions, FunctionFormat, FunctionTool, read_elisp, write_elisp,
};
use llmtool_format::Document;
use serde_json::{Map, Value, json};

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The tools to check: every example, the seed's two tools, and one with awkward text.
fn tools() -> Vec<(String, FunctionTool)> {
    let mut tools = Vec::new();
    for path in support::examples() {
        let document = Document::from_bytes(&std::fs::read(&path).unwrap());
        let tool = FunctionTool::from_tool(document.tool.as_ref().unwrap(), None, &[]).value;
        tools.push((path.file_stem().unwrap().to_string_lossy().into_owned(), tool));
    }
    let fixtures = manifest_dir().join("tests/fixtures/convert");
    let record: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures.join("record_summary.json")).unwrap(),
    )
    .unwrap();
    tools.push(("record_summary".into(), FunctionFormat::Anthropic.read(&record).unwrap()));
    let weather = std::fs::read_to_string(fixtures.join("get_weather.el")).unwrap();
    tools.push(("get_weather".into(), read_elisp(&weather).unwrap().value));
    tools.push((
        "awkward".into(),
        FunctionTool {
            name: "awkward".into(),
            title: None,
            description: "Quotes \"x\", a \\ backslash,\na new line; (parens) 'q' `b` 한국어 🚀"
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "key with spaces": { "type": "string", "description": "[brackets] ?x #y" },
                    "größe": { "type": "number", "minimum": -1.5, "default": 2 },
                    "flag": { "type": "boolean", "default": false },
                    "options": { "type": "object", "properties": { "type": { "type": "string" } } }
                },
                "required": ["key with spaces", "options"]
            }),
            output: None,
        },
    ));
    tools
}

/// The function spec that `flavor`'s package sends for `tool`, as this crate's schema predicts it.
fn expected(tool: &FunctionTool, flavor: ElispFlavor) -> Value {
    let (schema, _) = FunctionFormat::JsonSchema.write(tool, false);
    let required = schema["required"].clone();
    let mut properties = schema["properties"].as_object().unwrap().clone();
    let parameters = match flavor {
        ElispFlavor::Gptel => {
            for property in properties.values_mut() {
                let property = property.as_object_mut().unwrap();
                if property["type"] == "object" {
                    property.entry("required").or_insert(json!([]));
                    property.insert("additionalProperties".into(), json!(false));
                }
            }
            json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false })
        }
        ElispFlavor::LlmEl => {
            for property in properties.values_mut() {
                let kept: Map<String, Value> = property
                    .as_object()
                    .unwrap()
                    .iter()
                    .filter(|(k, _)| {
                        ["type", "description", "enum", "items", "properties"].contains(&k.as_str())
                    })
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                *property = Value::Object(kept);
            }
            let mut parameters = json!({ "type": "object", "properties": properties });
            if required.as_array().is_some_and(|r| !r.is_empty()) {
                parameters["required"] = required;
            }
            parameters
        }
    };
    json!({ "name": tool.name, "description": tool.description, "parameters": parameters })
}

/// Each file's line of output from Emacs, by file name.
fn run_emacs(files: &[PathBuf]) -> Map<String, Value> {
    let script = manifest_dir().join("tests/emacs/request-json.el");
    let output = Command::new("emacs")
        .args(["--batch", "-Q", "-l"])
        .arg(&script)
        .args(["-f", "llmtool-print-requests"])
        .args(files)
        .output()
        .unwrap_or_else(|error| {
            panic!("cannot run emacs ({error}): scripts/test.sh installs it (Debian emacs-nox)")
        });
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
            (value["file"].as_str().unwrap().to_owned(), value)
        })
        .collect()
}

#[test]
fn emacs_builds_the_json_schema_export_from_every_form() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    let mut expectations = Vec::new();
    for (name, tool) in tools() {
        for flavor in [ElispFlavor::Gptel, ElispFlavor::LlmEl] {
            let options =
                ElispOptions { asynchronous: name == "awkward", ..ElispOptions::default() };
            let form = write_elisp(&tool, flavor, &options).value;
            let path = dir.path().join(format!("{name}.{}.el", flavor.package()));
            std::fs::write(&path, form).unwrap();
            expectations.push((path.to_string_lossy().into_owned(), expected(&tool, flavor)));
            files.push(path);
        }
    }
    // The hand-written record_summary form sends the same JSON as ours.
    let by_hand = manifest_dir().join("tests/fixtures/convert/record_summary.el");
    let record = tools().into_iter().find(|(n, _)| n == "record_summary").unwrap().1;
    expectations
        .push((by_hand.to_string_lossy().into_owned(), expected(&record, ElispFlavor::Gptel)));
    files.push(by_hand);
    let results = run_emacs(&files);
    assert_eq!(results.len(), expectations.len());
    for (file, expected) in expectations {
        let result = &results[&file];
        assert!(result.get("error").is_none(), "{file}: {}", result["error"]);
        assert_eq!(result["function"], expected, "{file}");
    }
}

#[test]
fn emacs_refuses_a_list_where_a_vector_belongs() {
    // The reason the export always writes vectors: both packages fail on a list-valued :enum.
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for constructor in ["gptel-make-tool", "llm-make-tool"] {
        let path = dir.path().join(format!("{constructor}.el"));
        let form = format!(
            "({constructor} :name \"t\" :description \"d\" :function #'ignore\n  :args (list '(:name \"unit\" :type string :description \"u\" :enum (\"c\" \"f\"))))"
        );
        std::fs::write(&path, form).unwrap();
        files.push(path);
    }
    for (file, result) in run_emacs(&files) {
        assert!(result.get("error").is_some(), "{file}: {result}");
    }
}
