//! Conversion to and from function-tool formats: every example exports to every format, the
//! exports are snapshotted, and export then import gives back the same variables.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use crate::support;

use std::path::Path;

use llmtool_convert::{FunctionFormat, FunctionTool, naming, read_mcp_prompt, tool_value};
use llmtool_format::Document;
use serde_json::{Value, json};

fn examples() -> Vec<std::path::PathBuf> {
    let files = support::examples();
    assert!(files.len() >= 8);
    files
}

fn load(path: &Path) -> Document {
    let document = Document::from_bytes(&std::fs::read(path).unwrap());
    assert_eq!(document.summary().errors, 0, "{}", path.display());
    document
}

/// The variables as the tool file states them, for comparison.
fn variables(tool: &Value) -> Value {
    tool["metadata"]["variables"].clone()
}

fn original_variables(document: &Document) -> Value {
    let tool: Value = serde_json::from_str(&document.text).unwrap();
    let mut variables = variables(&tool);
    for variable in variables.as_array_mut().into_iter().flatten() {
        // Canonical order of the variable's keys does not matter for equality of objects.
        variable.as_object_mut().unwrap().retain(|key, _| {
            ["name", "type", "description", "default", "allowed_values"].contains(&key.as_str())
        });
    }
    variables
}

#[test]
fn every_example_exports_and_imports_back_through_every_format() {
    for path in examples() {
        let document = load(&path);
        let tool = document.tool.as_ref().unwrap();
        let function = FunctionTool::from_tool(tool, None, &[]);
        assert!(naming::is_portable(&function.value.name));
        for format in FunctionFormat::ALL {
            for strict in [false, true] {
                let (exported, _) = format.write(&function.value, strict);
                assert_eq!(FunctionFormat::detect(&exported), Some(format), "{}", format.name());
                let back = format.read(&exported).unwrap();
                assert_eq!(back.name, function.value.name);
                assert_eq!(back.description, function.value.description);
                let imported = tool_value(&back).value;
                if strict
                    && format != FunctionFormat::OpenAi
                    && format != FunctionFormat::OpenAiResponses
                {
                    continue;
                }
                // Strict mode moves defaults into descriptions: compare the rest then.
                if !strict {
                    assert_eq!(
                        variables(&imported),
                        original_variables(&document),
                        "{} through {}",
                        path.display(),
                        format.name()
                    );
                }
                // The imported file is a valid tool.
                let reimported = Document::from_text(imported.to_string());
                assert_eq!(
                    reimported.summary().errors,
                    0,
                    "{} through {}",
                    path.display(),
                    format.name()
                );
            }
        }
        // The MCP prompt keeps every argument and whether it is required.
        let prompt = function.value.mcp_prompt(tool);
        let back = read_mcp_prompt(&prompt).unwrap();
        let names: Vec<&str> =
            back.parameters["properties"].as_object().unwrap().keys().map(String::as_str).collect();
        let declared: Vec<String> = original_variables(&document)
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["name"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(names, declared);
    }
}

#[test]
fn exports_of_the_consultant_tool() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/strategy-consultant.json");
    let document = load(&path);
    let tool = document.tool.as_ref().unwrap();
    let function = FunctionTool::from_tool(tool, None, &[]);
    let dropped: Vec<String> = function.diagnostics.iter().map(|d| d.message.clone()).collect();
    insta::assert_snapshot!("consultant-dropped", dropped.join("\n"));
    for format in FunctionFormat::ALL {
        for strict in [false, true] {
            if strict && !matches!(format, FunctionFormat::OpenAi | FunctionFormat::OpenAiResponses)
            {
                continue;
            }
            let (value, diagnostics) = format.write(&function.value, strict);
            let notes: Vec<String> =
                diagnostics.iter().map(|d| format!("// {}", d.message)).collect();
            let name =
                format!("consultant-{}{}", format.name(), if strict { "-strict" } else { "" });
            insta::assert_snapshot!(
                name,
                format!("{}\n{}", notes.join("\n"), serde_json::to_string_pretty(&value).unwrap())
            );
        }
    }
    insta::assert_snapshot!(
        "consultant-mcp-prompt",
        serde_json::to_string_pretty(&function.value.mcp_prompt(tool)).unwrap()
    );
}

#[test]
fn names_that_apis_refuse_are_renamed_and_come_back() {
    let document = Document::from_text(
        json!({
            "model_prompt": "Reply to {{received email}} in a {{tone}} tone.",
            "metadata": {
                "prompt_name": "Reply helper",
                "description": "Drafts a reply.",
                "variables": [
                    { "name": "received email", "type": "text", "description": "The email." },
                    { "name": "tone", "type": "single-select", "allowed_values": ["warm", "brief"], "default": "warm", "description": "How it sounds." }
                ]
            }
        })
        .to_string(),
    );
    let function = FunctionTool::from_tool(document.tool.as_ref().unwrap(), None, &[]);
    let codes: Vec<&str> =
        function.diagnostics.iter().map(llmtool_format::Diagnostic::code).collect();
    assert!(codes.contains(&"LT702"), "{codes:?}");
    let properties = function.value.parameters["properties"].as_object().unwrap();
    assert_eq!(properties.keys().collect::<Vec<_>>(), ["received_email", "tone"]);
    assert_eq!(properties["received_email"]["title"], "received email");
    let back = tool_value(&function.value).value;
    assert_eq!(back["metadata"]["variables"][0]["name"], "received email");
    assert_eq!(function.value.parameters["required"], json!(["received_email"]));
}

/// What a model sends for each export target, keyed as that target's schema names the
/// parameters (strict OpenAI schemas send `null` for an optional one), reads back into the
/// same values: `llmtool call`'s arguments round-trip through every target.
#[test]
fn a_models_arguments_for_every_target_read_back_into_the_tools_values() {
    use llmtool_convert::{
        ArgumentError, ElispFlavor, ElispOptions, inputs_from_arguments, read_elisp, write_elisp,
    };
    use llmtool_format::template::{ToolTemplate, Value as TemplateValue};
    let document = Document::from_text(
        json!({
            "model_prompt": "Reply to {{received email}} in a {{tone}} tone, covering {{points}}.",
            "metadata": {
                "prompt_name": "Reply helper",
                "description": "Drafts a reply.",
                "variables": [
                    { "name": "received email", "type": "text", "description": "The email." },
                    { "name": "tone", "type": "single-select", "allowed_values": ["warm", "brief"], "default": "warm", "description": "How it sounds." },
                    { "name": "points", "type": "multi-select", "allowed_values": ["dates", "price", "thanks"], "description": "What to cover." }
                ]
            }
        })
        .to_string(),
    );
    let tool = document.tool.as_ref().unwrap();
    let template = ToolTemplate::new(tool);
    let function = FunctionTool::from_tool(tool, None, &[]).value;
    let mut schemas: Vec<(String, Value)> = Vec::new();
    for format in FunctionFormat::ALL {
        for strict in [false, true] {
            let (written, _) = format.write(&function, strict);
            let read = format.read(&written).unwrap();
            schemas.push((format!("{} strict={strict}", format.name()), read.parameters));
        }
    }
    for flavor in [ElispFlavor::Gptel, ElispFlavor::LlmEl] {
        let written = write_elisp(&function, flavor, &ElispOptions::default()).value;
        schemas.push((flavor.package().to_owned(), read_elisp(&written).unwrap().value.parameters));
    }
    for (target, parameters) in schemas {
        let keys: Vec<&String> = parameters["properties"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["received_email", "tone", "points"], "{target}");
        let arguments = json!({
            "received_email": "Can we meet on Friday?",
            "tone": null,
            "points": ["dates", "thanks"],
        });
        let inputs = inputs_from_arguments(template.variables(), &arguments).unwrap();
        let values = template.resolve(&inputs).unwrap();
        let expected = [
            TemplateValue::Text("Can we meet on Friday?".into()),
            TemplateValue::Text("warm".into()),
            TemplateValue::List(vec!["dates".into(), "thanks".into()]),
        ];
        assert_eq!(values, expected, "{target}");
    }
    // A variable's own name is taken too; a wrong type, a made-up parameter, the same one
    // twice and a non-object are refused, each saying what is wrong.
    let own = json!({ "received email": "Hi", "points": "price" });
    assert!(inputs_from_arguments(template.variables(), &own).is_ok());
    let refused =
        |arguments: Value| inputs_from_arguments(template.variables(), &arguments).unwrap_err();
    assert_eq!(
        refused(json!({ "received_email": ["a", "b"] })),
        ArgumentError::WrongType {
            key: "received_email".into(),
            expected: "a string",
            found: "an array"
        }
    );
    assert_eq!(
        refused(json!({ "points": { "dates": true } })).to_string(),
        "`points` must be an array of strings, found an object"
    );
    assert_eq!(
        refused(json!({ "subject": "x" })).to_string(),
        "`subject` is not a parameter of this tool; its parameters are `received_email`, `tone`, `points`"
    );
    assert!(matches!(
        refused(json!({ "received_email": "a", "received email": "b" })),
        ArgumentError::Twice { .. }
    ));
    assert_eq!(refused(json!(["a"])), ArgumentError::NotAnObject("an array"));
}

#[test]
fn parameters_without_a_variable_type_are_reported_and_listed() {
    let spec = json!({
        "name": "get_weather",
        "description": "Get the current weather in a given location",
        "input_schema": {
            "type": "object",
            "properties": {
                "location": { "type": "string", "description": "The city and state" },
                "unit": { "type": "string", "enum": ["celsius", "fahrenheit"] },
                "days": { "type": "integer" }
            },
            "required": ["location"]
        }
    });
    let function = FunctionFormat::Anthropic.read(&spec).unwrap();
    let converted = tool_value(&function);
    let messages: Vec<&str> = converted.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert!(messages.iter().any(|m| m.contains("`properties.days` (integer)")), "{messages:?}");
    assert!(messages.iter().any(|m| m.contains("`unit` has no default")), "{messages:?}");
    let tool = converted.value;
    assert_eq!(tool["metadata"]["prompt_name"], "Get weather");
    assert!(tool["model_prompt"].as_str().unwrap().contains("Days: (not a variable: integer)"));
    assert_eq!(tool["metadata"]["variables"][1]["type"], "single-select");
    assert_eq!(Document::from_text(tool.to_string()).summary().errors, 0);
}

#[test]
fn garbage_is_an_error_not_a_panic() {
    for value in [
        json!(null),
        json!([1, 2]),
        json!({"type": "function"}),
        json!({"function": 3, "type": "function"}),
    ] {
        for format in FunctionFormat::ALL {
            let _ = format.read(&value);
        }
        assert!(read_mcp_prompt(&value).is_err());
    }
    assert!(
        FunctionFormat::OpenAi
            .read(&json!({"type": "function", "function": {"name": "x", "parameters": 5}}))
            .is_err()
    );
}

/// Every conversion code (LT7xx) is emitted by a real conversion through core's format API
/// (`Format::write_tool`, `read_source`); the check vectors cover the other codes.
#[test]
fn every_conversion_code_is_emitted_by_some_conversion() {
    use llmtool_convert::{Format, WriteOptions, read_source};
    let codes = |diagnostics: &[llmtool_format::Diagnostic]| -> Vec<String> {
        diagnostics.iter().map(|d| d.code().to_owned()).collect()
    };
    let tool = |text: Value| Document::from_text(text.to_string());
    let export = |document: &Document, format: Format| {
        codes(&format.write_tool(document, &WriteOptions::default()).unwrap().diagnostics)
    };
    let mut found: Vec<String> = Vec::new();

    // No description, a variable name with a space, a multi-select, and a prompt with a role
    // line that Prompty splits at.
    let rich = tool(json!({
        "model_prompt": "system:\nDescribe {{aspect ratio}} for {{tags}}.",
        "metadata": { "prompt_name": "Rich", "variables": [
            { "name": "aspect ratio", "type": "text", "description": "d" },
            { "name": "tags", "type": "multi-select", "description": "d", "allowed_values": ["a", "b"] },
        ]},
    }));
    for format in [Format::OpenAi, Format::Gemini, Format::Prompty] {
        found.extend(export(&rich, format));
    }
    // A number parameter has no variable type.
    let imported = read_source(
        r#"{"type": "function", "function": {"name": "f", "description": "d",
            "parameters": {"type": "object", "properties": {"n": {"type": "number"}}}}}"#,
        "f.json",
        None,
    )
    .unwrap();
    if let llmtool_convert::Source::Function(function) = &imported.value {
        found.extend(codes(&llmtool_convert::tool_file(function).diagnostics));
    }
    // Not JSON, and a list where an elisp vector belongs.
    found.push(read_source("{ nope", "f.json", None).unwrap_err().code().to_owned());
    let elisp = r#"(gptel-make-tool :name "t" :description "d"
  :args (list '(:name "unit" :type string :enum ("c" "f"))))"#;
    found.extend(codes(&read_source(elisp, "t.el", None).unwrap().diagnostics));
    // A Dotprompt template that uses a value its schema does not declare.
    let dotprompt = "---\ninput:\n  schema:\n    a: string\n---\n{{a}} and {{b}}";
    found.extend(codes(&read_source(dotprompt, "t.prompt", None).unwrap().diagnostics));

    for rule in llmtool_convert::codes::ALL.iter().copied() {
        assert!(
            found.iter().any(|code| code == rule.code),
            "no conversion emitted {}: {found:?}",
            rule.code
        );
    }
}
