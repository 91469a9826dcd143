//! Prompt files (Prompty, Dotprompt, `llm` templates, Semantic Kernel folders and YAML
//! templates): every example,
//! and a prompt full of characters the template languages treat specially, exports and imports
//! back to the same tool file; the exports are snapshotted; templates with no equivalent are
//! refused by name.
//! (`scripts/peers.py` has the peers' own code render the exports.)

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use crate::support;

use llmtool_convert::{PromptFormat, Source, read_source, semantic_kernel};
use llmtool_format::Document;
use llmtool_format::format::format_source;
use llmtool_format::span::Span;

fn canonical(text: &str) -> String {
    format_source(text, false).unwrap().text
}

#[test]
fn every_tool_comes_back_unchanged_through_every_prompt_file() {
    let mut tools = support::examples();
    tools.push(
        support::repo().join("crates/llmtool-convert/tests/fixtures/convert/awkward-prompt.json"),
    );
    for path in tools {
        let text = std::fs::read_to_string(&path).unwrap();
        let document = Document::from_text(text.clone());
        for format in PromptFormat::ALL {
            let written = format.write(&document);
            // Langfuse cannot write some literal braces, which it then renders otherwise.
            let said = |d: &llmtool_format::Diagnostic| {
                d.code() == "LT702" || (format == PromptFormat::Langfuse && d.code() == "LT708")
            };
            assert!(
                written.diagnostics.iter().all(said),
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
        let folder = semantic_kernel::write(&document, None);
        assert!(folder.diagnostics.iter().all(|d| d.code() == "LT702"), "{:?}", folder.diagnostics);
        let function = folder.value;
        let back = semantic_kernel::read(&function.config, &function.prompt, None).unwrap();
        assert!(back.diagnostics.is_empty(), "{:?}", back.diagnostics);
        assert_eq!(back.value, canonical(&text), "{} through Semantic Kernel", path.display());
        // The same function as one YAML prompt template, found as such without `--from`.
        let yaml = semantic_kernel::write_yaml(&document, None).value;
        let read = read_source(&yaml, "function.yaml", None).unwrap();
        let Source::ToolFile(back) = read.value else { panic!("not a tool file") };
        assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
        assert_eq!(back, canonical(&text), "{} through Semantic Kernel YAML", path.display());
    }
}

#[test]
fn exports_of_the_image_prompt_writer() {
    let path = support::repo().join("examples/image-prompt-writer.json");
    let document = Document::from_text(std::fs::read_to_string(path).unwrap());
    for format in PromptFormat::ALL {
        let written = format.write(&document);
        let notes: Vec<String> =
            written.diagnostics.iter().map(|d| format!("# {}", d.message)).collect();
        insta::assert_snapshot!(
            format!("image-prompt-writer-{}", format.name()),
            format!("{}\n{}", notes.join("\n"), written.value)
        );
    }
    let function = semantic_kernel::write(&document, None).value;
    insta::assert_snapshot!(
        "image-prompt-writer-semantic-kernel",
        format!(
            "{}/{}:\n{}{}/{}:\n{}",
            function.name,
            semantic_kernel::CONFIG_FILE,
            function.config,
            function.name,
            semantic_kernel::PROMPT_FILE,
            function.prompt
        )
    );
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
    let lone_dollar = "prompt: Costs $5 for $item\n";
    let problem = PromptFormat::LlmTemplate.read(lone_dollar).unwrap_err();
    assert!(problem.message.contains("`$5 for $item`"), "{}", problem.message);
    let call = semantic_kernel::read("{}", "Today is {{time.today}}.", Some("x")).unwrap_err();
    assert_eq!(call.file, semantic_kernel::PROMPT_FILE);
    assert!(call.diagnostic.message.contains("{{time.today}}"), "{}", call.diagnostic.message);
    assert_eq!(call.diagnostic.primary.unwrap().span, Span::new(9, 23));
    let not_json = semantic_kernel::read("{\n  \"name\": }", "text", None).unwrap_err();
    assert_eq!(not_json.file, semantic_kernel::CONFIG_FILE);
    assert!(not_json.diagnostic.message.contains("config.json"), "{}", not_json.diagnostic.message);
    assert_eq!(not_json.diagnostic.primary.unwrap().span, Span::new(12, 13));
    let format = semantic_kernel::read(r#"{"template_format": "razor"}"#, "x", None).unwrap_err();
    assert_eq!(
        (format.file, format.diagnostic.primary.unwrap().span),
        ("config.json", Span::new(20, 27))
    );
}

#[test]
fn llm_templates_written_by_hand_are_read_and_keep_what_has_no_field() {
    let template = "system: Answer in French.\nprompt: 'Summarise $input in ${n}0 words, for $$$price.'\nmodel: gpt-4o-mini\ndefaults:\n  n: 5\n  unused: x\noptions:\n  temperature: 0.2\nextract: true\n";
    let read = PromptFormat::LlmTemplate.read(template).unwrap();
    let codes: Vec<_> = read.diagnostics.iter().map(|d| (d.code(), d.message.clone())).collect();
    assert_eq!(codes.len(), 1, "{codes:?}");
    assert!(codes[0].1.contains("`unused`"), "{codes:?}");
    let tool: serde_json::Value = serde_json::from_str(&read.value).unwrap();
    // The system prompt is the chat's system turn.
    assert_eq!(tool["x-chat"], true);
    assert_eq!(
        tool["model_prompt"],
        "system:\nAnswer in French.\n\nuser:\nSummarise {{input}} in {{n}}0 words, for ${{price}}."
    );
    let metadata = &tool["metadata"];
    assert_eq!(metadata["variables"][0], serde_json::json!({ "name": "input", "type": "text" }));
    assert_eq!(metadata["variables"][1]["default"], "5");
    assert_eq!(metadata["expected_output"]["type"], "code");
    assert_eq!(metadata["parameters"]["temperature"], 0.2);
    assert!(metadata.get("x-llm-template").is_none(), "{metadata}");
    let document = Document::from_text(read.value.clone());
    assert_eq!(document.summary().errors, 0);
    // The system prompt goes back where it came from.
    let again = PromptFormat::LlmTemplate.write(&document).value;
    let fields =
        "prompt: \"Summarise $input in ${n}0 words, for $$$price.\"\nsystem: Answer in French.\n";
    assert!(again.contains(fields), "{again}");
    // A file that is one string is the prompt; `llm` adds the text it is given after a prompt
    // with no `$input`, so the tool does too (empty when none is given).
    let bare = PromptFormat::LlmTemplate.read("Tell me about $topic\n").unwrap();
    let tool: serde_json::Value = serde_json::from_str(&bare.value).unwrap();
    assert_eq!(tool["model_prompt"], "Tell me about {{topic}}\n{{input}}");
    assert_eq!(
        tool["metadata"]["variables"][1],
        serde_json::json!({ "name": "input", "type": "text", "default": "" })
    );
    assert_eq!(bare.diagnostics[0].code(), "LT708");
    // `extract_last`: a code answer, with a warning at the key that the tool takes the first
    // block where `llm` takes the last; the setting goes back to `llm` on export.
    let last = "prompt: Write $what in Python\nextract_last: true\n";
    let read = PromptFormat::LlmTemplate.read(last).unwrap();
    let tool: serde_json::Value = serde_json::from_str(&read.value).unwrap();
    assert_eq!(tool["metadata"]["expected_output"]["type"], "code", "{tool}");
    let said = read.diagnostics.iter().find(|d| d.message.contains("extract_last")).unwrap();
    assert_eq!(said.code(), "LT708");
    assert_eq!(said.primary.as_ref().unwrap().span, Span::new(30, 42));
    let again = PromptFormat::LlmTemplate.write(&Document::from_text(read.value)).value;
    assert!(again.contains("extract_last: true") && again.contains("extract: true"), "{again}");
}

#[test]
fn kernel_functions_written_by_hand_are_read() {
    let config = r#"{
      "schema": 1, "type": "completion", "description": "Writes a joke.",
      "execution_settings": {
        "default": { "model_id": "gpt-4o", "max_tokens": 100, "temperature": 0.9 },
        "other": { "temperature": 0.1 }
      },
      "input_variables": [
        { "name": "style", "description": "How it sounds", "default": "dry", "is_required": false,
          "json_schema": "{\"type\": \"string\", \"enum\": [\"dry\", \"silly\"]}" },
        { "name": "input", "description": "The subject", "is_required": true }
      ]
    }"#;
    let read = semantic_kernel::read(
        config,
        "A {{$style}} joke about {{ $input }} in {{$lang}}.",
        Some("Joke"),
    )
    .unwrap();
    assert_eq!(read.diagnostics.len(), 1, "{:?}", read.diagnostics);
    assert_eq!(read.diagnostics[0].code(), "LT701");
    let tool: serde_json::Value = serde_json::from_str(&read.value).unwrap();
    assert_eq!(tool["model_prompt"], "A {{style}} joke about {{input}} in {{lang}}.");
    let metadata = &tool["metadata"];
    assert_eq!(metadata["prompt_name"], "Joke");
    assert_eq!(metadata["model_version"], serde_json::json!(["gpt-4o"]));
    assert_eq!(
        metadata["parameters"],
        serde_json::json!({ "max_tokens": 100, "temperature": 0.9 })
    );
    let variables = metadata["variables"].as_array().unwrap();
    assert_eq!(variables[0]["type"], "single-select");
    assert_eq!(variables[0]["allowed_values"], serde_json::json!(["dry", "silly"]));
    assert_eq!(variables[0]["default"], "dry");
    assert!(variables[1].get("default").is_none());
    assert_eq!(variables[2]["name"], "lang");
    assert_eq!(Document::from_text(read.value).summary().errors, 0);
}

#[test]
fn files_written_by_hand_are_read() {
    // Prompty's short forms: scalar inputs, options, two messages, a chat's two turns.
    let prompty = "---\nname: Helper\nmodel:\n  id: gpt-4o\n  options:\n    temperature: 0.2\ninputs:\n  question: What is up?\n---\nsystem:\nBe brief.\nuser:\n{{question}}\n";
    let read = PromptFormat::Prompty.read(prompty).unwrap();
    let tool: serde_json::Value = serde_json::from_str(&read.value).unwrap();
    assert_eq!(tool["model_prompt"], "system:\nBe brief.\n\nuser:\n{{question}}");
    assert_eq!(tool["x-chat"], true);
    assert_eq!(tool["metadata"]["parameters"]["temperature"], 0.2);
    assert_eq!(tool["metadata"]["model_version"], serde_json::json!(["gpt-4o"]));
    // The short form's value is a sample, not a default: the input is asked for.
    assert!(tool["metadata"]["variables"][0].get("default").is_none(), "{tool}");
    // Only an input the file calls optional (`required: false`) may be left empty.
    let optional = "---\nname: Helper\ninputs:\n  question:\n    type: string\n  context:\n    type: string\n    required: false\n---\n{{question}} {{context}}\n";
    let tool: serde_json::Value =
        serde_json::from_str(&PromptFormat::Prompty.read(optional).unwrap().value).unwrap();
    let variables = &tool["metadata"]["variables"];
    assert!(variables[0].get("default").is_none(), "{tool}");
    assert_eq!(variables[1]["default"], "", "{tool}");
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

#[test]
fn what_the_peers_send_is_what_the_import_says() {
    let prompt = |read: &llmtool_convert::Converted<String>| {
        let tool: serde_json::Value = serde_json::from_str(&read.value).unwrap();
        tool["model_prompt"].as_str().unwrap().to_owned()
    };
    // Prompty sends a body with no role line as a system message.
    let read = PromptFormat::Prompty.read("---\nname: x\n---\nBe brief.\n").unwrap();
    assert_eq!(prompt(&read), "system:\nBe brief.");
    assert_eq!(read.diagnostics[0].code(), "LT708");
    // A `thread` input is the conversation so far: its placeholder goes, with a located warning.
    let thread = "---\ninputs:\n  question:\n    kind: string\n  chat:\n    kind: thread\n---\nsystem:\nBe brief.\n{{chat}}\nuser:\n{{question}}\n";
    let read = PromptFormat::Prompty.read(thread).unwrap();
    assert_eq!(prompt(&read), "system:\nBe brief.\n\nuser:\n{{question}}");
    let left_out = read.diagnostics.iter().find(|d| d.message.contains("`chat`")).unwrap();
    assert_eq!(left_out.primary.as_ref().unwrap().span, Span::new(43, 47));
    // An image input cannot be text: the rest is read, the input and its place (a Markdown
    // image, as Prompty places one) left out, with a warning at the input's name (list form
    // too).
    let image = "---\ninputs:\n  - name: photo\n    kind: image\n  - name: ask\n    kind: string\n---\nuser:\nWhat is in ![the photo]({{photo}}) here? {{ask}}\n";
    let read = PromptFormat::Prompty.read(image).unwrap();
    assert_eq!(prompt(&read), "What is in  here? {{ask}}");
    let left_out = read.diagnostics.iter().find(|d| d.message.contains("`photo`")).unwrap();
    assert!(left_out.message.contains("`image`"), "{}", left_out.message);
    assert_eq!(left_out.primary.as_ref().unwrap().span, Span::new(22, 27));
    let tool: serde_json::Value = serde_json::from_str(&read.value).unwrap();
    assert_eq!(tool["metadata"]["variables"].as_array().unwrap().len(), 1, "{tool}");
    // A file input written bare, in Prompty 1's `type`, beside a thread: each named.
    let file = "---\ninputs:\n  contract:\n    type: file\n  chat:\n    kind: thread\n  q:\n    type: string\n---\nuser:\n{{contract}}\n{{chat}}\n{{q}}\n";
    let read = PromptFormat::Prompty.read(file).unwrap();
    assert_eq!(prompt(&read), "{{q}}");
    for (name, span) in [("contract", Span::new(14, 22)), ("chat", Span::new(41, 45))] {
        let said = read.diagnostics.iter().find(|d| d.message.contains(&format!("`{name}`")));
        assert_eq!(said.and_then(|d| d.primary.as_ref()).map(|l| l.span), Some(span), "{name}");
    }
    // Prompty 1's `type`, and defaults that are not text.
    let typed = "---\ninputs:\n  age:\n    type: number\n    default: 18\n---\nuser:\n{{age}}\n";
    let read = PromptFormat::Prompty.read(typed).unwrap();
    let tool: serde_json::Value = serde_json::from_str(&read.value).unwrap();
    assert_eq!(tool["metadata"]["variables"][0]["default"], "18");
    assert!(read.diagnostics.iter().any(|d| d.message.contains("`number`")));
    // A boolean default is written as Prompty's Jinja2 (Python) writes it; Nunjucks (in
    // JavaScript) writes it in lower case.
    let flag =
        "---\ninputs:\n  loud:\n    kind: boolean\n    default: true\n---\nuser:\n{{loud}}\n";
    let tool: serde_json::Value =
        serde_json::from_str(&PromptFormat::Prompty.read(flag).unwrap().value).unwrap();
    assert_eq!(tool["metadata"]["variables"][0]["default"], "True");
    assert_eq!(
        tool["metadata"]["variables"][0]["allowed_values"],
        serde_json::json!(["True", "False"])
    );
    // A boolean given as JSON takes that spelling, as Prompty's Jinja2 prints it.
    let (text, _) = imported_render(flag, "flag.prompty", &serde_json::json!({"loud": false}));
    assert_eq!(text, "False");
    // An input with no default is asked for, where Prompty renders nothing: said at the input.
    let bare = "---\ninputs:\n  who:\n    kind: string\n  what:\n    kind: string\n---\nuser:\n{{who}} {{what}}";
    let read = PromptFormat::Prompty.read(bare).unwrap();
    let said = read.diagnostics.iter().find(|d| d.code() == "LT708").unwrap();
    assert!(said.message.contains("`who`, `what`"), "{}", said.message);
    let at = said.primary.as_ref().unwrap().span;
    assert_eq!(&bare[at.start..at.end], "who");
    let nunjucks = flag.replace("---\nuser", "template:\n  format:\n    kind: nunjucks\n---\nuser");
    let tool: serde_json::Value =
        serde_json::from_str(&PromptFormat::Prompty.read(&nunjucks).unwrap().value).unwrap();
    assert_eq!(tool["metadata"]["variables"][0]["default"], "true");
    // A list placed bare is written by Handlebars as `a,b`: said where it is used.
    let bare = "---\ninput:\n  schema:\n    type: object\n    properties:\n      tags:\n        type: array\n        items:\n          type: string\n          enum: [a, b]\n---\nTags: {{tags}}";
    let read = PromptFormat::Dotprompt.read(bare).unwrap();
    let said = read.diagnostics.iter().find(|d| d.message.contains("`a,b`")).unwrap();
    let at = said.primary.as_ref().unwrap().span;
    assert_eq!(&bare[at.start..at.end], "tags");
    // Dotprompt sends what follows `{{history}}` as a model message.
    let history = "---\ninput:\n  schema:\n    q: string\n---\n{{role \"system\"}}\nBe brief.\n{{history}}\n{{q}}";
    let read = PromptFormat::Dotprompt.read(history).unwrap();
    assert_eq!(prompt(&read), "system:\nBe brief.\nassistant:\n{{q}}");
    let left_out = read.diagnostics.iter().find(|d| d.message.contains("history")).unwrap();
    assert_eq!(left_out.primary.as_ref().unwrap().span, Span::new(67, 78));
    // A body with Windows line ends splits into the same turns; a turn keeps its `\r\n` inside,
    // as Dotprompt sends it.
    let crlf = "---\r\ninput:\r\n  schema:\r\n    q: string\r\n---\r\n{{role \"system\"}}\r\nBe brief.\r\n{{role \"user\"}}\r\nHi\r\n{{q}}\r\n";
    let (text, _) = imported_render(crlf, "crlf.prompt", &serde_json::json!({"q": "why?"}));
    let turns = llmtool_format::chat::split(&text);
    let sent: Vec<_> = turns.iter().map(|turn| (turn.role, turn.text.trim())).collect();
    assert_eq!(sent, [("system", "Be brief."), ("user", "Hi\r\nwhy?")]);
    // A line of a turn that reads as a role line is text to Dotprompt: it stays in its turn.
    let transcript = "{{role \"system\"}}\nS\n{{role \"user\"}}\nA transcript:\nuser:\nhi";
    let read = PromptFormat::Dotprompt.read(transcript).unwrap();
    let turns = llmtool_format::chat::split(&prompt(&read));
    assert_eq!(turns.len(), 2, "{turns:?}");
    assert_eq!(turns[1].text, "A transcript:\nuser:\nhi");
}

/// The tool file read from `text` (a `.prompt` or `.prompty`, by `name`), rendered with
/// `values`; and the codes said on the way.
fn imported_render(text: &str, name: &str, values: &serde_json::Value) -> (String, Vec<String>) {
    let read = PromptFormat::from_path(name).unwrap().read(text).unwrap();
    let codes = read.diagnostics.iter().map(|d| d.code().to_owned()).collect();
    let document = Document::from_text(read.value);
    let tool = document.tool.unwrap();
    let template = llmtool_format::template::ToolTemplate::new(&tool);
    let inputs = llmtool_format::template::Inputs::from_json(values, template.variables()).unwrap();
    (template.render(&inputs).unwrap(), codes)
}

/// An import keeps exactly the source's placeholders: literal braces stay literal, and a value
/// the template uses without declaring it is a variable that renders as the source renders it.
#[test]
fn imports_keep_exactly_the_sources_placeholders() {
    // Jinja's raw block and string expression, with no inputs at all: nothing to ask for.
    let prompty = "---\nname: Raw\n---\nWrite {% raw %}{{ name }}{% endraw %} and {{ \"{{\" }}x}}.";
    let (text, _) = imported_render(prompty, "raw.prompty", &serde_json::json!({}));
    assert_eq!(text, "system:\nWrite {{ name }} and {{x}}.");
    // Literal text that spells a placeholder of the same tool cannot stay literal: refused,
    // at the value's use.
    for (source, name) in [
        ("---\nname: R\n---\n{% raw %}{{name}}{% endraw %} is {{ name }}", "r.prompty"),
        ("---\ninput:\n  schema:\n    name: string\n---\n\\{{name}} is {{name}}", "r.prompt"),
        ("prompt: 'Write {{name}} for $name'", "r.yaml"),
    ] {
        let format = PromptFormat::from_path(name).unwrap();
        let problem = format.read(source).unwrap_err();
        assert!(
            problem.message.contains("as literal text and also uses `name`"),
            "{}",
            problem.message
        );
        let span = problem.primary.as_ref().unwrap().span;
        assert_eq!(&source[span.start..span.end], "name", "{name}");
        // At the literal text, which comes before the value's use.
        assert!(source[span.end..].contains("name"), "{name}: {span:?}");
    }
    // LT709 points at the value's use, not at a comment that spells it.
    let commented = "---\nname: C\n---\n{# {{b}} #} then {{ b }}";
    let read = PromptFormat::Prompty.read(commented).unwrap();
    let warning = read.diagnostics.iter().find(|d| d.code() == "LT709").unwrap();
    assert_eq!(warning.primary.as_ref().unwrap().span.start, commented.rfind('b').unwrap());

    // A Dotprompt schema that declares `a` only: `b` is declared too, empty unless given, and
    // LT709 says so at its use.
    let dotprompt = "---\ninput:\n  schema:\n    a: string\n---\n{{a}} and {{b}}.";
    let read = PromptFormat::Dotprompt.read(dotprompt).unwrap();
    let warning = read.diagnostics.iter().find(|d| d.code() == "LT709").unwrap();
    let span = warning.primary.as_ref().unwrap().span;
    assert_eq!(&dotprompt[span.start..span.end], "b");
    let (text, _) = imported_render(dotprompt, "t.prompt", &serde_json::json!({ "a": "A" }));
    assert_eq!(text, "A and .");

    // A path into an object input is a variable of its own, which stands for the object.
    let nested = "---\ninputs:\n  - name: user\n    kind: object\n---\nuser:\nHi {{ user.name }}";
    let read = PromptFormat::Prompty.read(nested).unwrap();
    assert!(read.value.contains("\"name\": \"user.name\""), "{}", read.value);
    assert!(
        !read.value.contains("\"name\": \"user\""),
        "the object is not asked for: {}",
        read.value
    );
    let (text, _) =
        imported_render(nested, "t.prompty", &serde_json::json!({ "user.name": "Ann" }));
    assert_eq!(text, "Hi Ann");

    // Dotprompt's `input.default` without a schema is the variable's default.
    let defaulted = "---\ninput:\n  default:\n    name: User\n---\nHello, {{name}}!";
    let (text, _) = imported_render(defaulted, "t.prompt", &serde_json::json!({}));
    assert_eq!(text, "Hello, User!");
}

/// Jinja's whitespace control is applied at import; Nunjucks is read as Jinja.
#[test]
fn jinja_whitespace_control_is_kept_and_nunjucks_reads_as_jinja() {
    let prompty = "---\nname: Trim\ninputs:\n  - name: v\n    kind: string\ntemplate:\n  format:\n    kind: nunjucks\n---\na   {{- v -}}   b\n{#- note #}";
    let (text, codes) = imported_render(prompty, "trim.prompty", &serde_json::json!({ "v": "V" }));
    assert_eq!(text, "system:\naVb");
    assert!(!codes.contains(&"LT709".to_owned()), "{codes:?}");
    // The role line the import adds stays a line of its own, whatever the template trims.
    let leading = "---\nname: Lead\ninputs:\n  - name: v\n    kind: string\n---\n{#- licence -#}\n{{- v }} then";
    let (text, _) = imported_render(leading, "lead.prompty", &serde_json::json!({ "v": "V" }));
    assert_eq!(text, "system:\nV then");
}

/// A file llmtool exported and someone then edited: a value added to its template is declared
/// like any other the source does not declare.
#[test]
fn an_edited_export_declares_what_was_added_to_its_template() {
    let tool = r#"{"model_prompt": "Notes on {{topic}}.", "version": "2",
        "metadata": {"prompt_name": "Notes", "description": "d",
            "creator": {"name": "Ann"},
            "variables": [{"name": "topic", "type": "text", "description": "d"}]}}"#;
    let document = Document::from_text(tool.to_owned());
    let exported = PromptFormat::Prompty.write(&document).value;
    assert!(exported.contains("llmtool"), "the export keeps a block: {exported}");
    let edited =
        exported.replace("Notes on {{ topic }}.", "Notes on {{ topic }} in a {{ tone }} tone.");
    assert_ne!(edited, exported, "{exported}");
    let read = PromptFormat::Prompty.read(&edited).unwrap();
    assert!(read.diagnostics.iter().any(|d| d.code() == "LT709"), "{:?}", read.diagnostics);
    assert!(read.value.contains("\"name\": \"tone\""), "{}", read.value);

    // The same when the export renamed a variable (`first name`), which its block keeps: the
    // block's variables are the tool's, and the added one comes after them.
    let renamed = tool.replace("topic", "first name");
    let document = Document::from_text(renamed);
    for (format, was, now) in [
        (PromptFormat::Prompty, "{{ first_name }}.", "{{ first_name }} in a {{ tone }} tone."),
        (PromptFormat::LlmTemplate, "$first_name.", "$first_name in a $tone tone."),
    ] {
        let exported = format.write(&document).value;
        let edited = exported.replace(was, now);
        assert_ne!(edited, exported, "{exported}");
        let read = format.read(&edited).unwrap();
        let tool: serde_json::Value = serde_json::from_str(&read.value).unwrap();
        assert_eq!(tool["model_prompt"], "Notes on {{first name}} in a {{tone}} tone.");
        let names: Vec<&str> = tool["metadata"]["variables"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["first name", "tone"], "{}", format.name());
    }
}

/// The exact prompt a Langfuse export keeps in `config.llmtool` comes back only while the
/// prompt in Langfuse is still the one exported: an edit made in Langfuse wins, with a warning
/// at the stale copy.
#[test]
fn a_prompt_edited_in_langfuse_wins_over_the_exact_copy() {
    // Langfuse's Python SDK leaves `{{{name}}}` as it is: the export keeps the exact prompt.
    let text = r#"{"model_prompt": "Fill {{{name}}} in a {{tone}} tone.", "metadata": {"prompt_name": "Fill",
        "variables": [{"name": "name", "type": "text"}, {"name": "tone", "type": "text"}]}}"#;
    let exported = PromptFormat::Langfuse.write(&Document::from_text(text.to_owned())).value;
    assert!(exported.contains("\"model_prompt\""), "the export keeps the exact prompt: {exported}");
    let back = PromptFormat::Langfuse.read(&exported).unwrap();
    assert!(back.diagnostics.is_empty(), "{:?}", back.diagnostics);
    assert_eq!(back.value, canonical(text));

    // The prompt comes before the copy in `config.llmtool`: only it is edited.
    let edited = exported.replacen("Fill {{{name}}}", "Complete {{{name}}}", 1);
    assert_ne!(edited, exported, "{exported}");
    let read = PromptFormat::Langfuse.read(&edited).unwrap();
    let stale = read.diagnostics.iter().find(|d| d.message.contains("out of date")).unwrap();
    let span = stale.primary.as_ref().unwrap().span;
    assert_eq!(&edited[span.start..span.end], "\"Fill {{{name}}} in a {{tone}} tone.\"");
    // Langfuse fills no value `name` in the edit: it is no longer a variable.
    assert!(stale.message.contains("fill no value `name`"), "{}", stale.message);
    let tool: serde_json::Value = serde_json::from_str(&read.value).unwrap();
    let prompt = tool["model_prompt"].as_str().unwrap();
    assert!(prompt.starts_with("Complete "), "{prompt}");
}

/// A chat goes to Semantic Kernel as `<message>` elements, its text encoded, and comes back as
/// the same turns.
#[test]
fn a_chat_goes_to_semantic_kernel_as_messages_and_back() {
    let path = support::repo().join("crates/llmtool-format/tests/fixtures/valid/chat-awkward.json");
    let document = Document::from_text(std::fs::read_to_string(path).unwrap());
    let written = semantic_kernel::write(&document, None);
    assert!(written.diagnostics.is_empty(), "{:?}", written.diagnostics);
    let template = written.value.prompt;
    assert!(template.starts_with("<message role=\"system\">You answer as {{$persona}}: plain text &amp; no &lt;tags&gt;, {curly} braces or &amp;amp;lt; entities.</message>\n<message role=\"user\">"), "{template}");
    let back = semantic_kernel::read(&written.value.config, &template, None).unwrap();
    let tool = Document::from_text(back.value.clone());
    let turns =
        |document: &Document| llmtool_format::chat::split(document.tool.as_ref().unwrap().prompt());
    assert_eq!(turns(&tool), turns(&document));
    assert!(tool.tool.as_ref().unwrap().is_chat());
}

/// Langfuse sends a variable it is given no value for as `{{name}}`: the import says that the
/// tool asks for it instead, at the prompt, and says nothing of a prompt llmtool exported.
#[test]
fn a_langfuse_prompts_unfilled_variables_are_said_at_the_prompt() {
    let text = r#"{"name": "greet", "type": "text", "prompt": "Hi {{name}}", "version": 1}"#;
    let read = PromptFormat::Langfuse.read(text).unwrap();
    let said = read.diagnostics.iter().find(|d| d.code() == "LT708").unwrap();
    assert!(
        said.message.contains("`{{name}}`") && said.message.contains("`None`"),
        "{}",
        said.message
    );
    let at = said.primary.as_ref().unwrap().span;
    assert_eq!(&text[at.start..at.end], "\"Hi {{name}}\"");
    let tool = Document::from_text(read.value);
    let exported = PromptFormat::Langfuse.write(&tool).value;
    let back = PromptFormat::Langfuse.read(&exported).unwrap();
    assert!(back.diagnostics.is_empty(), "{:?}", back.diagnostics);
}

/// The files of a test folder, by name.
struct Folder(&'static [(&'static str, &'static str)]);

impl llmtool_convert::SiblingFiles for Folder {
    fn read(&self, name: &str) -> Result<String, String> {
        let found = self.0.iter().find(|(file, _)| *file == name);
        found.map(|(_, text)| (*text).to_owned()).ok_or_else(|| format!("no file `{name}`"))
    }
}

/// Prompty's `inputs: ${file:NAME}` is read from the file named, JSON or YAML, as Prompty
/// reads it; a reference that cannot be followed is an error at the reference.
#[test]
fn prompty_inputs_named_in_a_file_beside_it_are_read_from_that_file() {
    let folder = Folder(&[
        ("schema.json", r#"[{"name": "question", "kind": "string", "default": "What is AI?"}]"#),
        ("inputs.yaml", "tone:\n  kind: string\n  enumValues: [calm, brisk]\n"),
        ("broken.json", "[{"),
    ]);
    let read = |name: &str| {
        let text = format!("---\nname: F\ninputs: ${{file:{name}}}\n---\nuser:\nSay {{{{x}}}}");
        (PromptFormat::Prompty.read_in(&text, &folder), text)
    };
    let (json, _) = read("schema.json");
    let json = json.unwrap().value;
    assert!(json.contains("\"default\": \"What is AI?\""), "{json}");
    let (yaml, _) = read("inputs.yaml");
    let yaml = yaml.unwrap().value;
    assert!(yaml.contains("\"type\": \"single-select\""), "{yaml}");
    for (name, says) in [
        ("broken.json", "is not JSON"),
        ("missing.json", "no file `missing.json`"),
        ("../up.json", "leads out"),
    ] {
        let (problem, text) = read(name);
        let problem = problem.unwrap_err();
        assert!(problem.message.contains(says), "{name}: {}", problem.message);
        let span = problem.primary.as_ref().unwrap().span;
        assert_eq!(&text[span.start..span.end], format!("${{file:{name}}}"));
    }
    // Without a folder (standard input), the reference is refused where it is.
    let text = "---\ninputs: ${file:schema.json}\n---\nHi";
    let problem = PromptFormat::Prompty.read(text).unwrap_err();
    assert!(problem.message.contains("not read from a file"), "{}", problem.message);
}

/// Jinja's `default("...")` filter is the variable's default: for an input with none of its
/// own, and for a value the inputs do not declare; two defaults for one value are refused.
#[test]
fn a_jinja_default_filter_is_the_variables_default() {
    let prompty = "---\nname: D\ninputs:\n  - name: who\n    kind: string\n  - name: mood\n    kind: string\n    default: calm\n---\nHi {{ who | default('you') }} ({{ mood|d(\"odd\") }}), {{ x | default(\"there\") }}";
    let (text, _) = imported_render(prompty, "d.prompty", &serde_json::json!({}));
    assert_eq!(text, "system:\nHi you (calm), there");
    let (text, _) = imported_render(prompty, "d.prompty", &serde_json::json!({ "who": "Ann" }));
    assert_eq!(text, "system:\nHi Ann (calm), there");

    let twice = "---\nname: T\n---\n{{ who | default('you') }} and {{ who }}";
    let problem = PromptFormat::Prompty.read(twice).unwrap_err();
    assert!(problem.message.contains("one default"), "{}", problem.message);
    let span = problem.primary.as_ref().unwrap().span;
    assert_eq!(&twice[span.start..span.end], "who");
    // Any other filter, or a default after another filter, has no equivalent.
    for other in ["{{ who | default('a') | upper }}", "{{ who | default(x) }}", "{{ who | upper }}"]
    {
        let source = format!("---\nname: O\n---\n{other}");
        let problem = PromptFormat::Prompty.read(&source).unwrap_err();
        assert!(problem.message.contains("has no equivalent"), "{other}: {}", problem.message);
    }
}

/// `llm` fills `$input` with the text it is given: a default for it is never used, so the
/// import leaves it out (at its key), and the input is asked for.
#[test]
fn an_llm_templates_input_follows_llm_not_its_default() {
    let template = "prompt: 'Say $input to $who'\ndefaults:\n  input: hello\n  who: Ann\n";
    let read = PromptFormat::LlmTemplate.read(template).unwrap();
    let left_out = read.diagnostics.iter().find(|d| d.code() == "LT701").unwrap();
    let span = left_out.primary.as_ref().unwrap().span;
    assert_eq!(&template[span.start..span.end], "input");
    let (text, _) = imported_render(template, "t.yaml", &serde_json::json!({ "input": "hi" }));
    assert_eq!(text, "Say hi to Ann");
    let tool: serde_json::Value = serde_json::from_str(&read.value).unwrap();
    assert_eq!(
        tool["metadata"]["variables"][0],
        serde_json::json!({"name": "input", "type": "text"})
    );
}
