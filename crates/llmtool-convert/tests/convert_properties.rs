//! Property tests for conversion: any representable tool (awkward text, names with spaces and
//! other scripts, every variable type) comes back from each prompt file, a Semantic Kernel
//! folder and each elisp form as it went in, and no source text makes an importer panic.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use llmtool_convert::{
    ElispFlavor, ElispOptions, FunctionTool, PromptFormat, read_elisp, semantic_kernel, write_elisp,
};
use llmtool_format::Document;
use llmtool_format::template::{Inputs, ToolTemplate};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Text with what template languages and quoting treat specially.
fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("{".to_owned()),
            Just("}".to_owned()),
            Just("{%".to_owned()),
            Just("{#".to_owned()),
            Just("$".to_owned()),
            Just("\\".to_owned()),
            Just("\"".to_owned()),
            Just("'".to_owned()),
            Just("\n".to_owned()),
            Just("user:".to_owned()),
            Just("yes".to_owned()),
            Just("주제".to_owned()),
            Just("🚀".to_owned()),
            "[a-z ]{1,5}",
        ],
        1..8,
    )
    .prop_map(|parts| parts.concat())
}

const NAMES: [&str; 5] = ["topic", "aspect ratio", "주제", "tone-of-voice", "x1"];

/// A valid tool: variables of every type, and a prompt that uses each of them among text.
fn tool() -> impl Strategy<Value = Value> {
    let variable =
        (0..3u8, proptest::collection::btree_set("[a-z]{1,4}|yes|on", 1..4), any::<bool>(), text());
    (proptest::collection::vec(variable, 1..=NAMES.len()), proptest::collection::vec(text(), 6), text())
        .prop_map(|(variables, literals, description)| {
            let mut prompt = literals[0].clone();
            let mut declared = Vec::new();
            for (i, (kind, allowed, with_default, about)) in variables.into_iter().enumerate() {
                let name = NAMES[i];
                prompt.push_str(&format!("{{{{{name}}}}}"));
                prompt.push_str(&literals[i + 1]);
                let allowed: Vec<String> = allowed.into_iter().collect();
                let mut variable = json!({ "name": name, "description": about });
                match kind {
                    0 => {
                        variable["type"] = json!("text");
                        if with_default {
                            variable["default"] = json!(about);
                        }
                    }
                    1 => {
                        variable["type"] = json!("single-select");
                        variable["allowed_values"] = json!(allowed);
                        if with_default {
                            variable["default"] = json!(allowed[0]);
                        }
                    }
                    _ => {
                        variable["type"] = json!("multi-select");
                        variable["allowed_values"] = json!(allowed);
                        if with_default {
                            variable["default"] = json!([allowed[allowed.len() - 1]]);
                        }
                    }
                }
                declared.push(variable);
            }
            json!({
                "model_prompt": prompt,
                "metadata": { "prompt_name": "Generated", "description": description, "variables": declared }
            })
        })
}

/// The prompt rendered with every default, and the first allowed value or a fixed text for
/// the rest: two tools with equal renders and equal variables are the same tool.
fn render_all(document: &Document) -> String {
    let template = ToolTemplate::new(document.tool.as_ref().unwrap());
    let mut inputs = Inputs::new();
    for variable in template.variables() {
        if variable.default.is_none() {
            inputs.push(
                variable.name.clone(),
                variable.allowed_values.first().cloned().unwrap_or_else(|| "v{{x}}$y".into()),
            );
        }
    }
    template.render(&inputs).unwrap()
}

fn variables(text: &str) -> Value {
    serde_json::from_str::<Value>(text).unwrap()["metadata"]["variables"].clone()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn prompt_files_give_back_the_tool(tool in tool()) {
        let text = tool.to_string();
        let document = Document::from_text(text.clone());
        prop_assert_eq!(document.summary().errors, 0, "{}", text);
        for format in PromptFormat::ALL {
            let written = format.write(&document);
            let back = format.read(&written.value).map_err(|e| TestCaseError::fail(format!("{}: {}\n{}", format.name(), e.message, written.value)))?;
            let reread = Document::from_text(back.value.clone());
            prop_assert_eq!(reread.summary().errors, 0, "{}", back.value);
            prop_assert_eq!(render_all(&reread), render_all(&document), "{}:\n{}", format.name(), written.value);
            prop_assert_eq!(variables(&back.value), variables(&text));
        }
        let function = semantic_kernel::write(&document, None).value;
        let back = semantic_kernel::read(&function.config, &function.prompt, None)
            .map_err(|e| TestCaseError::fail(format!("{}\n{}", e.diagnostic.message, function.prompt)))?;
        prop_assert_eq!(render_all(&Document::from_text(back.value.clone())), render_all(&document), "{}", function.prompt);
        prop_assert_eq!(variables(&back.value), variables(&text));
    }

    #[test]
    fn elisp_gives_back_the_function(tool in tool()) {
        let document = Document::from_text(tool.to_string());
        let function = FunctionTool::from_tool(document.tool.as_ref().unwrap(), None, &[]).value;
        let expected = FunctionTool { title: None, ..function.clone() };
        for flavor in [ElispFlavor::Gptel, ElispFlavor::LlmEl] {
            let form = write_elisp(&function, flavor, &ElispOptions::default()).value;
            prop_assert_eq!(read_elisp(&form).unwrap().value, expected.clone(), "{}", form);
        }
    }

    #[test]
    fn importers_never_panic(text in "[-\\[\\](){}\"'`,;#?:.\\\\a-z0-9 \n|%$~@!^]{0,200}") {
        let _ = read_elisp(&text);
        for format in PromptFormat::ALL {
            let _ = format.read(&text);
            let _ = format.read(&format!("---\n{text}\n---\n{text}"));
        }
        let _ = semantic_kernel::read(&text, &text, None);
        let _ = semantic_kernel::read(r#"{"input_variables": [{"name": "x"}]}"#, &text, Some(&text));
    }
}
