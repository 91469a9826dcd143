//! A test file and its tool written for promptfoo: the config and the prompt file, as
//! snapshots (`scripts/promptfoo_peer.py` runs them with promptfoo itself).

use crate::support;

use llmtool_convert::promptfoo;
use llmtool_format::Document;
use llmtool_format::suite::read_json;

#[test]
fn the_agreement_suite_is_written_for_promptfoo() {
    let folder = support::repo().join("crates/llmtool-convert/tests/fixtures/promptfoo");
    let tests = std::fs::read_to_string(folder.join("agreement.tests.json")).unwrap();
    let tool = std::fs::read_to_string(folder.join("agreement.json")).unwrap();
    let read = read_json(&tests);
    let file = read.file.expect("the test file reads");
    let written =
        promptfoo::export(&file, &Document::from_text(tool), "agreement", &["mock/m".into()])
            .expect("the tool has no errors");
    assert!(written.diagnostics.is_empty(), "{:?}", written.diagnostics);
    insta::assert_snapshot!("agreement-promptfooconfig", written.value.config);
    let (name, prompt) = &written.value.prompt_file;
    assert_eq!(name, "agreement.prompt.json");
    insta::assert_snapshot!("agreement-prompt", prompt);
}

#[test]
fn what_promptfoo_has_no_counterpart_for_is_said_where_it_is_written() {
    let tests = r#"{"cases": [{"name": "x", "vars": {"question": "q"}, "assert": [
        {"type": "similar", "value": "a reply", "threshold": 0.7},
        {"type": "json_path", "path": "$.a", "value": 1},
        {"type": "contains", "value": "{{ not a value }}"}
    ]}]}"#;
    let tool = std::fs::read_to_string(
        support::repo().join("crates/llmtool-convert/tests/fixtures/promptfoo/agreement.json"),
    )
    .unwrap();
    let file = read_json(tests).file.unwrap();
    let written = promptfoo::export(&file, &Document::from_text(tool), "agreement", &[]).unwrap();
    let said: Vec<&str> = written.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(said[0].contains("embeddings") && said[1].contains("`json_path`"), "{said:?}");
    for diagnostic in &written.diagnostics {
        let span = diagnostic.primary.as_ref().expect("placed").span;
        assert!(
            tests[span.start..span.end].starts_with("{\"type\""),
            "{}",
            &tests[span.start..span.end]
        );
    }
    // promptfoo renders an assertion's value as Nunjucks: braces are written as literals.
    assert!(
        written.value.config.contains(r#"value: "{{ \"{{\" }} not a value }}""#),
        "{}",
        written.value.config
    );
    // The tool names no model: promptfoo's usual OpenAI one.
    assert!(written.value.config.contains("openai:chat:gpt-4o-mini"), "{}", written.value.config);
}

/// The files beside a config, in memory.
struct Beside(Vec<(&'static str, String)>);

impl llmtool_convert::SiblingFiles for Beside {
    fn read(&self, name: &str) -> Result<String, String> {
        let found = self.0.iter().find(|(file, _)| *file == name);
        found.map(|(_, text)| text.clone()).ok_or_else(|| format!("no file `{name}`"))
    }
}

#[test]
fn a_suite_written_for_promptfoo_reads_back_to_the_same_checks() {
    use llmtool_format::suite::Check;
    let folder = support::repo().join("crates/llmtool-convert/tests/fixtures/promptfoo");
    let tests = std::fs::read_to_string(folder.join("agreement.tests.json")).unwrap();
    let tool = std::fs::read_to_string(folder.join("agreement.json")).unwrap();
    let original = read_json(&tests).file.unwrap();
    let written =
        promptfoo::export(&original, &Document::from_text(tool), "agreement", &["mock/m".into()])
            .unwrap();
    let (prompt_name, prompt) = written.value.prompt_file.clone();
    let files = Beside(vec![(Box::leak(prompt_name.into_boxed_str()), prompt)]);
    let read = llmtool_convert::promptfoo::import::import(&written.value.config, &files).unwrap();
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    let [suite] = read.value.as_slice() else { panic!("one prompt, one suite") };
    let tool = serde_json::from_str::<serde_json::Value>(&suite.tool).unwrap();
    assert_eq!(tool["model_prompt"], "Answer in one line: {{question}}");
    let back = read_json(&suite.tests).file.expect("the test file reads");
    // `equals` trims both sides in llmtool: the trimmed value is the same check.
    let same = |check: &Check| match check {
        Check::Equals(value) => Check::Equals(value.trim().to_owned()),
        other => other.clone(),
    };
    let checks = |list: &[llmtool_format::suite::Assertion]| -> Vec<(Check, f64)> {
        list.iter().map(|a| (same(&a.check), a.weight)).collect()
    };
    assert_eq!(checks(&back.shared), checks(&original.shared));
    assert_eq!(back.cases.len(), original.cases.len());
    for (ours, theirs) in original.cases.iter().zip(&back.cases) {
        assert_eq!(theirs.name, ours.name);
        assert_eq!(theirs.vars, ours.vars, "{}", ours.name);
        assert_eq!(theirs.threshold, ours.threshold, "{}", ours.name);
        assert_eq!(checks(&theirs.assertions), checks(&ours.assertions), "{}", ours.name);
    }
}

#[test]
fn a_config_written_by_hand_is_read_as_promptfoo_runs_it() {
    let config = r#"
description: Translations
prompts:
  - "Translate to {{ language }}: {{ input }}"
  - file://prompts.txt
providers:
  - id: openai:chat:gpt-4o-mini
    config: { temperature: 0.1, max_tokens: 100 }
  - anthropic:messages:claude-haiku-4-5
defaultTest:
  vars: { language: French }
  assert:
    - type: icontains-any
      value: [bonjour, salut]
tests:
  - description: greetings
    vars:
      input: [Hello, Hi]
    assert:
      - type: contains-all
        value: "a, b"
        weight: 2
      - type: javascript
        value: output.length > 3
  - vars: { input: "{{ language }} please" }
    assert:
      - type: similar
        value: hello
"#;
    let files =
        Beside(vec![("prompts.txt", "Say {{ input }}.\n---\nWhisper {{ input }}.\n".into())]);
    let read = llmtool_convert::promptfoo::import::import(config, &files).unwrap();
    let names: Vec<&str> = read.value.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["prompt-1", "prompts-1", "prompts-2"]);
    let tool: serde_json::Value = serde_json::from_str(&read.value[0].tool).unwrap();
    assert_eq!(tool["model_prompt"], "Translate to {{language}}: {{input}}");
    assert_eq!(
        tool["metadata"]["model_version"],
        serde_json::json!(["gpt-4o-mini", "claude-haiku-4-5"])
    );
    assert_eq!(
        tool["metadata"]["parameters"],
        serde_json::json!({"temperature": 0.1, "max_tokens": 100})
    );
    assert_eq!(tool["metadata"]["variables"][0]["default"], "French");
    let whisper: serde_json::Value = serde_json::from_str(&read.value[2].tool).unwrap();
    assert_eq!(whisper["model_prompt"], "Whisper {{input}}.");
    let tests = read_json(&read.value[0].tests).file.unwrap();
    // A list value is one case per item, as promptfoo runs it.
    let cases: Vec<(&str, &serde_json::Value)> =
        tests.cases.iter().map(|c| (c.name.as_str(), &c.vars["input"])).collect();
    assert_eq!(
        cases[..2],
        [
            ("greetings (1)", &serde_json::json!("Hello")),
            ("greetings (2)", &serde_json::json!("Hi"))
        ]
    );
    assert_eq!(cases[2].0, "test 2");
    assert!(
        matches!(&tests.shared[0].check, llmtool_format::suite::Check::Regex(p) if p == "(?i)(?:bonjour|salut)")
    );
    // `contains-all` is one `contains` per value, the weight shared; JavaScript and embeddings
    // have no counterpart.
    let weights: Vec<f64> = tests.cases[0].assertions.iter().map(|a| a.weight).collect();
    assert_eq!(weights, [1.0, 1.0]);
    let said: Vec<&str> = read.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert!(
        said.iter().any(|m| m.starts_with("`tests[0].assert[1]` (javascript) is left out")),
        "{said:?}"
    );
    assert!(
        said.iter().any(|m| m.starts_with("`tests[1].assert[0]` (similar) is left out")),
        "{said:?}"
    );
    // Tests kept in another file are named, not guessed.
    let elsewhere = "prompts: ['Hi {{x}}']\ntests: file://tests.csv\n";
    let refused = llmtool_convert::promptfoo::import::import(elsewhere, &files).unwrap_err();
    assert!(refused.message.contains("inline"), "{}", refused.message);
}

#[test]
fn lists_of_values_make_a_bounded_number_of_cases_and_providers_name_their_models() {
    let items: Vec<String> = (0..10).map(|i| format!("v{i}")).collect();
    let list = format!("[{}]", items.join(", "));
    let vars: Vec<String> = (0..5).map(|i| format!("x{i}: {list}")).collect();
    // Five lists of ten: 100,000 combinations, refused before any is made.
    let config = format!("prompts: ['Hi {{{{x0}}}}']\ntests:\n  - vars: {{{}}}\n", vars.join(", "));
    let refused = llmtool_convert::promptfoo::import::import(&config, &Beside(vec![])).unwrap_err();
    assert!(refused.message.contains("more than 10000 cases"), "{}", refused.message);
    assert!(refused.primary.is_some(), "placed at `tests`");
    // Lists of numbers are one value, as promptfoo passes them.
    let numbers = "prompts: ['Sum {{xs}}']\nproviders: ['ollama:chat:llama3.1:8b', 'file://provider.js']\ntests:\n  - vars: {xs: [1, 2, 3]}\n";
    let read = llmtool_convert::promptfoo::import::import(numbers, &Beside(vec![])).unwrap();
    let tests = read_json(&read.value[0].tests).file.unwrap();
    assert_eq!(tests.cases.len(), 1);
    assert_eq!(tests.cases[0].vars["xs"], "1,2,3");
    let tool: serde_json::Value = serde_json::from_str(&read.value[0].tool).unwrap();
    assert_eq!(tool["metadata"]["model_version"], serde_json::json!(["llama3.1:8b"]));
}

/// A tool's expected output goes to promptfoo as a `transform` that enforces it before the
/// assertions (`scripts/promptfoo_peer.py` has promptfoo run it on fenced, quoted and plain
/// answers); a transform in a config, which is code, is said and left out on import.
#[test]
fn the_expected_output_is_enforced_by_a_transform_and_a_transform_is_not_imported() {
    let transform = |name: &str| {
        let examples = support::repo().join("examples");
        let tests = std::fs::read_to_string(examples.join(format!("{name}.tests.json"))).unwrap();
        let tool = std::fs::read_to_string(examples.join(format!("{name}.json"))).unwrap();
        let file = read_json(&tests).file.unwrap();
        let written =
            promptfoo::export(&file, &Document::from_text(tool), name, &["mock/m".into()]).unwrap();
        let config: serde_json::Value = serde_yaml_ng::from_str(&written.value.config).unwrap();
        config["defaultTest"]["options"]["transform"].as_str().map(str::to_owned)
    };
    let sql = transform("sql-assistant").unwrap();
    assert!(
        sql.contains(r#"kind: "code", language: "SQL", aliases: [], allowed: [], format: null"#),
        "{sql}"
    );
    let limited = transform("strategy-consultant").unwrap();
    assert!(limited.contains(r#"allowed: ["go", "wait", "stop"]"#), "{limited}");
    let json = transform("legal-agreement-review").unwrap();
    assert!(json.contains(r#"format: "json""#), "{json}");
    assert_eq!(transform("teach-me-anything"), None, "plain text is taken as it is");

    let config = format!(
        "prompts: ['Say {{{{x}}}}']\nproviders: [openai:gpt-4o-mini]\ndefaultTest:\n  options:\n    transform: {}\ntests:\n  - vars: {{x: hi}}\n    options: {{postprocess: output.toUpperCase()}}\n",
        serde_json::to_string(&sql).unwrap()
    );
    let read =
        llmtool_convert::promptfoo::import::import(&config, &llmtool_convert::NoFolder).unwrap();
    let said: Vec<&str> = read.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(
        said[0].starts_with(
            "`defaultTest.options.transform` is left out: it is the code llmtool writes"
        ),
        "{said:?}"
    );
    assert!(
        said[1].starts_with("`tests[0].options.postprocess` is left out: it changes the answer"),
        "{said:?}"
    );
}
