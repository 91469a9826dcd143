//! gptel and llm.el forms: the `record_summary` and `get_weather` tools of the elisp seed
//! convert both ways, every example goes through both forms and back unchanged, and a bad form gets a
//! located error.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use crate::support;

use std::path::Path;

use llmtool_convert::{
    ElispFlavor, ElispOptions, FunctionFormat, FunctionTool, read_elisp, write_elisp,
};
use llmtool_format::Document;
use serde_json::{Value, json};

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/convert").join(name);
    std::fs::read_to_string(path).unwrap()
}

fn anthropic(name: &str) -> FunctionTool {
    FunctionFormat::Anthropic.read(&serde_json::from_str(&fixture(name)).unwrap()).unwrap()
}

fn round_trip(tool: &FunctionTool, flavor: ElispFlavor) -> FunctionTool {
    let written = write_elisp(tool, flavor, &ElispOptions::default());
    let back = read_elisp(&written.value).unwrap();
    assert!(back.diagnostics.is_empty(), "{:?}", back.diagnostics);
    back.value
}

#[test]
fn record_summary_json_becomes_the_documented_form() {
    let from_json = anthropic("record_summary.json");
    let written = write_elisp(&from_json, ElispFlavor::Gptel, &ElispOptions::default());
    assert!(written.diagnostics.is_empty(), "{:?}", written.diagnostics);
    insta::assert_snapshot!("record_summary-gptel", written.value);
    // The hand-written form and ours describe the same tool.
    let by_hand = read_elisp(&fixture("record_summary.el")).unwrap().value;
    let ours = read_elisp(&written.value).unwrap().value;
    assert_eq!(ours, by_hand);
    assert_eq!(ours, from_json);
    // And back to JSON, equal to where it started.
    let (back, _) = FunctionFormat::Anthropic.write(&ours, false);
    let original: Value = serde_json::from_str(&fixture("record_summary.json")).unwrap();
    assert_eq!(back, original);
}

#[test]
fn get_weather_form_becomes_its_json() {
    let read = read_elisp(&fixture("get_weather.el")).unwrap();
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    let (json, _) = FunctionFormat::Anthropic.write(&read.value, false);
    let expected: Value = serde_json::from_str(&fixture("get_weather.json")).unwrap();
    assert_eq!(json, expected);
    for flavor in [ElispFlavor::Gptel, ElispFlavor::LlmEl] {
        assert_eq!(round_trip(&read.value, flavor), read.value);
    }
}

#[test]
fn every_example_goes_through_both_forms_and_back() {
    for path in support::examples() {
        let document = Document::from_bytes(&std::fs::read(&path).unwrap());
        let function = FunctionTool::from_tool(document.tool.as_ref().unwrap(), None, &[]).value;
        // The title is the one thing elisp has no place for.
        let untitled = FunctionTool { title: None, ..function.clone() };
        for flavor in [ElispFlavor::Gptel, ElispFlavor::LlmEl] {
            assert_eq!(round_trip(&function, flavor), untitled, "{}", path.display());
        }
    }
}

#[test]
fn awkward_text_survives() {
    let tool = FunctionTool {
        name: "quote_me".into(),
        title: None,
        description:
            "Says \"hi\"\\ then\n\ta line; (not code) [or this] 'x' `y` ?z #w 한국어 🚀 \u{1}"
                .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "a key with spaces": { "type": "string", "description": "(parens)" },
                "1": { "type": "number", "default": 1.5e-7, "minimum": -3 },
                "flag": { "type": "boolean", "default": false },
                "nothing": { "type": "null" },
                "obj": { "type": "object", "properties": {}, "required": [] }
            },
            "required": ["a key with spaces"]
        }),
        output: None,
    };
    assert_eq!(round_trip(&tool, ElispFlavor::Gptel), tool);
}

#[test]
fn function_and_async_are_written_as_asked() {
    let tool = anthropic("get_weather.json");
    let options = ElispOptions {
        function: Some("my/get-weather".into()),
        asynchronous: true,
        ..ElispOptions::default()
    };
    let written = write_elisp(&tool, ElispFlavor::LlmEl, &options).value;
    assert!(written.starts_with("(llm-make-tool\n"), "{written}");
    assert!(written.contains(" :function #'my/get-weather\n :async t)"), "{written}");
    let stub = write_elisp(&tool, ElispFlavor::Gptel, &ElispOptions::default()).value;
    assert!(stub.contains("(lambda (&rest _args)"), "{stub}");
    // Reading back warns that `:async` has no place in a tool.
    let back = read_elisp(&written).unwrap();
    assert_eq!(back.diagnostics.len(), 1);
    assert_eq!(back.diagnostics[0].code(), "LT701");
}

/// The function that runs the tool through `llmtool call` pairs the values with the
/// parameters in the order of `:args`, names the tool as given, and reads back as the same
/// tool (its `lambda` is the user's code, not read); gptel's options are written for gptel
/// alone.
#[test]
fn the_runner_calls_llmtool_with_the_parameters_in_the_order_of_args() {
    let tool = anthropic("get_weather.json");
    let options = ElispOptions {
        runner: Some("/srv/tools/weather.json".into()),
        asynchronous: true,
        confirm: true,
        include: true,
        ..ElispOptions::default()
    };
    let gptel = write_elisp(&tool, ElispFlavor::Gptel, &options).value;
    let keys: Vec<&String> = tool.parameters["properties"].as_object().unwrap().keys().collect();
    let listed = keys.iter().map(|k| format!("{k:?}")).collect::<Vec<_>>().join(" ");
    assert!(gptel.contains(&format!("(keys '({listed}))")), "{gptel}");
    assert!(gptel.contains(r#"(list program "call" "/srv/tools/weather.json" "-")"#), "{gptel}");
    assert!(gptel.contains("(lambda (callback &rest given)"), "{gptel}");
    for option in [" :async t", " :confirm t", " :include t", " :category \"llmtool\""] {
        assert!(gptel.contains(option), "{option}: {gptel}");
    }
    assert_eq!(read_elisp(&gptel).unwrap().value, tool);
    let sync = ElispOptions { asynchronous: false, ..options };
    let llm = write_elisp(&tool, ElispFlavor::LlmEl, &sync).value;
    assert!(llm.contains("(lambda (&rest given)") && llm.contains("call-process-region"), "{llm}");
    assert!(!llm.contains(":confirm") && !llm.contains(":category") && !llm.contains(":async"));
    assert_eq!(read_elisp(&llm).unwrap().value, tool);
}

/// A parameter or a path that holds what looks like the runner's placeholders, quotes or
/// parentheses stays inside its string: the form is filled in one pass, each text escaped.
#[test]
fn the_runner_keeps_keys_and_paths_inside_their_strings() {
    let tool = FunctionTool {
        name: "t".into(),
        title: None,
        description: "d".into(),
        parameters: json!({
            "type": "object",
            "properties": { "MY_TOOL": { "type": "string" }, "KEYS": { "type": "string" } },
            "required": ["MY_TOOL", "KEYS"]
        }),
        output: None,
    };
    let path = r#"/tmp/a@KEYS@ @TOOL@ ")) (shell-command "id") ;x.json"#;
    for asynchronous in [true, false] {
        let options =
            ElispOptions { runner: Some(path.into()), asynchronous, ..ElispOptions::default() };
        let form = write_elisp(&tool, ElispFlavor::Gptel, &options).value;
        assert!(form.contains(r#"(keys '("MY_TOOL" "KEYS"))"#), "{form}");
        let escaped = r#""/tmp/a@KEYS@ @TOOL@ \")) (shell-command \"id\") ;x.json""#;
        assert!(form.contains(&format!(r#""call" {escaped} "-")"#)), "{form}");
        assert_eq!(read_elisp(&form).unwrap().value, tool);
    }
}

#[test]
fn llm_el_says_what_it_will_not_send() {
    let tool = FunctionTool {
        name: "t".into(),
        title: None,
        description: "d".into(),
        parameters: json!({
            "type": "object",
            "properties": { "tone": { "type": "string", "enum": ["a"], "default": "a" } },
            "required": []
        }),
        output: None,
    };
    let written = write_elisp(&tool, ElispFlavor::LlmEl, &ElispOptions::default());
    let messages: Vec<&str> = written.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(messages[0].contains("`default` of `tone`"), "{messages:?}");
    assert!(
        write_elisp(&tool, ElispFlavor::Gptel, &ElispOptions::default()).diagnostics.is_empty()
    );
}

#[test]
fn a_list_where_a_vector_belongs_is_read_and_reported() {
    let text = r#"(gptel-make-tool :name "t" :description "d"
  :args (list '(:name "unit" :type string :enum ("c" "f"))))"#;
    let read = read_elisp(text).unwrap();
    assert_eq!(read.value.parameters["properties"]["unit"]["enum"], json!(["c", "f"]));
    let warning = &read.diagnostics[0];
    assert_eq!(warning.code(), "LT707");
    let span = warning.primary.as_ref().unwrap().span;
    assert_eq!(&text[span.range()], r#"("c" "f")"#);
}

#[test]
fn the_seed_typo_key_reads_as_json_serialize_would_write_it() {
    // `:description:` (a typo in the seed) is a keyword too: its key keeps the second colon.
    let text = r#"(llm-make-tool :name "t" :description "d"
  :args (list '(:name "o" :type object :properties (:n (:type string :description: "x")))))"#;
    let read = read_elisp(text).unwrap().value;
    assert_eq!(
        read.parameters["properties"]["o"]["properties"]["n"],
        json!({ "type": "string", "description:": "x" })
    );
}

#[test]
fn forms_outside_the_subset_get_located_errors() {
    let cases = [
        ("(gptel-make-tool :name my-name)", "my-name", "variable"),
        ("(gptel-make-tool :name \"x\" :args `((:name ,n)))", "`((:name ,n))", "backquote"),
        // A backquote in a form that is never evaluated (the function) is no problem.
        ("(gptel-make-tool :function (lambda (x) `(:y ,x)) :args (list \"s\"))", "\"s\"", "plist"),
        ("(gptel-make-tool :name \"x\" :args (mapcar #'f l))", "(mapcar #'f l)", "not evaluated"),
        ("(gptel-make-tool :description \"x\")", "(gptel-make-tool :description \"x\")", ":name"),
        ("(gptel-make-tool :name)", ":name", "no value"),
        (
            "(gptel-make-tool :name \"a\") (llm-make-tool :name \"b\")",
            "(llm-make-tool :name \"b\")",
            "2 tools",
        ),
        (
            "(gptel-make-tool :name \"x\" :args (list '(:type string)))",
            "(:type string)",
            "no `:name`",
        ),
        ("(gptel-make-tool :name \"x\" :args (list \"s\"))", "\"s\"", "plist"),
        ("(setq x 1)", "", "no `(gptel-make-tool"),
        ("(gptel-make-tool :name \"x\"", "(", "never closed"),
    ];
    for (text, at, says) in cases {
        let problem = read_elisp(text).unwrap_err();
        assert_eq!(problem.code(), "LT704");
        assert!(problem.message.contains(says), "{text}: {}", problem.message);
        let found = problem.primary.as_ref().map_or("", |label| &text[label.span.range()]);
        assert_eq!(found, at, "{text}");
    }
}

#[test]
fn wrapped_forms_and_concatenated_text_are_read() {
    let text = r#";; in an init file
(add-to-list 'gptel-tools
  (gptel-make-tool :name "n"
                   :description (concat "two " "parts")
                   :args (list (list :name "x" :type 'string :description "d"))
                   :category "misc"))"#;
    let read = read_elisp(text).unwrap();
    assert_eq!(read.value.description, "two parts");
    assert_eq!(read.value.parameters["properties"]["x"]["type"], "string");
    assert_eq!(read.diagnostics[0].code(), "LT701");
}
