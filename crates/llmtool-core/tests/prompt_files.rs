//! Prompt files (Prompty, Dotprompt): every example, and a prompt full of characters the
//! template languages treat specially, exports and imports back to the same tool file; the
//! exports are snapshotted; templates with no equivalent are refused by name.
//! (`scripts/peers.py` has the peers' own code render the exports.)

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

mod support;

use llmtool_core::Document;
use llmtool_core::convert::PromptFormat;
use llmtool_core::format::format_source;

fn canonical(text: &str) -> String {
    format_source(text, false).unwrap().text
}

#[test]
fn every_tool_comes_back_unchanged_through_every_prompt_file() {
    let mut tools = support::examples();
    tools.push(
        support::repo().join("crates/llmtool-core/tests/fixtures/convert/awkward-prompt.json"),
    );
    for path in tools {
        let text = std::fs::read_to_string(&path).unwrap();
        let document = Document::from_text(text.clone());
        for format in PromptFormat::ALL {
            let written = format.write(&document);
            assert!(
                written.diagnostics.iter().all(|d| d.code() == "LT702"),
                "{} {}: {:?}",
                path.display(),
                format.name(),
                written.diagnostics
            );
            let back = format.read(&written.value).unwrap();
            assert!(back.diagnostics.is_empty(), "{:?}", back.diagnostics);
            assert_eq!(
                back.value,
                canonical(&text),
                "{} through {}",
                path.display(),
                format.name()
            );
        }
    }
}

#[test]
fn exports_of_the_image_generator() {
    let path = support::repo().join("examples/image-generator.json");
    let document = Document::from_text(std::fs::read_to_string(path).unwrap());
    for format in PromptFormat::ALL {
        let written = format.write(&document);
        let notes: Vec<String> =
            written.diagnostics.iter().map(|d| format!("# {}", d.message)).collect();
        insta::assert_snapshot!(
            format!("image-generator-{}", format.name()),
            format!("{}\n{}", notes.join("\n"), written.value)
        );
    }
}

#[test]
fn templates_with_no_equivalent_are_refused() {
    let prompty = "---\nname: x\n---\nuser:\n{% for item in items %}{{ item }}{% endfor %}\n";
    let problem = PromptFormat::Prompty.read(prompty).unwrap_err();
    assert!(problem.message.contains("{% for item in items %}"), "{}", problem.message);
    let dotprompt = "---\nname: x\n---\n{{#if formal}}Dear{{/if}} {{name}}";
    let problem = PromptFormat::Dotprompt.read(dotprompt).unwrap_err();
    assert!(problem.message.contains("#if formal"), "{}", problem.message);
    let unclosed = "---\nname: x\n";
    assert!(PromptFormat::Dotprompt.read(unclosed).unwrap_err().message.contains("closing"));
    let not_yaml = "---\nname: [x\n---\nbody";
    assert!(PromptFormat::Prompty.read(not_yaml).unwrap_err().message.contains("YAML"));
}

#[test]
fn files_written_by_hand_are_read() {
    // Prompty's short forms: scalar inputs, options, two messages kept as text with a warning.
    let prompty = "---\nname: Helper\nmodel:\n  id: gpt-4o\n  options:\n    temperature: 0.2\ninputs:\n  question: What is up?\n---\nsystem:\nBe brief.\nuser:\n{{question}}\n";
    let read = PromptFormat::Prompty.read(prompty).unwrap();
    assert_eq!(read.diagnostics[0].code(), "LT708");
    let tool: serde_json::Value = serde_json::from_str(&read.value).unwrap();
    assert_eq!(tool["model_prompt"], "system:\nBe brief.\nuser:\n{{question}}");
    assert_eq!(tool["metadata"]["parameters"]["temperature"], 0.2);
    assert_eq!(tool["metadata"]["model_version"], serde_json::json!(["gpt-4o"]));
    assert_eq!(tool["metadata"]["variables"][0]["default"], "");
    // Dotprompt's Picoschema.
    let dotprompt = "---\nmodel: googleai/gemini-2.5-flash\ninput:\n  schema:\n    topic: string, what to write about\n    tone?(enum, how it sounds): [warm, dry]\n  default:\n    tone: warm\n---\nWrite about {{topic}} in a {{tone}} tone.";
    let read = PromptFormat::Dotprompt.read(dotprompt).unwrap();
    let tool: serde_json::Value = serde_json::from_str(&read.value).unwrap();
    let variables = &tool["metadata"]["variables"];
    assert_eq!(variables[0]["description"], "what to write about");
    assert_eq!(variables[1]["type"], "single-select");
    assert_eq!(variables[1]["default"], "warm");
    assert_eq!(Document::from_text(read.value).summary().errors, 0);
}
