//! The `llmtool` binary end to end: exit statuses, exact output bytes, files written.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn example(name: &str) -> PathBuf {
    repo().join("examples").join(name)
}

fn llmtool(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut pipe = child.stdin.take().unwrap();
    // A command that refuses its arguments may exit before it reads: that is its answer.
    match pipe.write_all(stdin.unwrap_or_default()) {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {}
        written => written.unwrap(),
    }
    drop(pipe);
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The ten example tools (the smart one in its folder) and the nine test files of those that
/// write text.
#[test]
fn check_examples_strict_passes() {
    let out = llmtool(&["check", "--strict", repo().join("examples").to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("checked 21 files: 0 errors, 0 warnings"));
}

#[test]
fn check_exit_codes() {
    let warning_only = br#"{"model_prompt": "Hi"}"#;
    assert_eq!(llmtool(&["check", "-"], Some(warning_only)).status.code(), Some(0));
    assert_eq!(llmtool(&["check", "--strict", "-"], Some(warning_only)).status.code(), Some(1));
    assert_eq!(llmtool(&["check", "-"], Some(b"{")).status.code(), Some(1));
    let missing = llmtool(&["check", "/nonexistent/tool.json"], None);
    assert_eq!(missing.status.code(), Some(2));
    let stderr = text(&missing.stderr);
    assert!(stderr.contains("cannot read `/nonexistent/tool.json`"), "{stderr}");
    assert_eq!(stderr.matches("No such file").count(), 1, "the cause is said once: {stderr}");
    assert_eq!(llmtool(&["check", "--strct"], None).status.code(), Some(2), "usage errors exit 2");
}

#[test]
fn folders_are_searched_through_links_and_fmt_writes_through_them() {
    let folder = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("shared.json");
    std::fs::write(&target, br#"{"model_prompt": "Hi", "metadata": {"prompt_name": "S"}}"#)
        .unwrap();
    let link = folder.path().join("shared.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    std::os::unix::fs::symlink(folder.path().join("nowhere"), folder.path().join("broken.json"))
        .unwrap();
    let dir = folder.path().to_str().unwrap();

    let checked = llmtool(&["check", dir], None);
    assert_eq!(checked.status.code(), Some(0), "{}", text(&checked.stderr));
    assert!(text(&checked.stdout).contains("checked 1 file"), "{}", text(&checked.stdout));
    assert!(text(&checked.stderr).contains("warning: skipped"), "{}", text(&checked.stderr));

    let formatted = llmtool(&["fmt", dir], None);
    assert_eq!(formatted.status.code(), Some(0), "{}", text(&formatted.stderr));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "still a link");
    assert!(std::fs::read_to_string(&target).unwrap().contains("\n  \"model_prompt\""));
}

#[test]
fn check_formats() {
    let input = b"{\"model_prompt\": \"Hi\",}";
    let json = llmtool(&["check", "--format", "json", "-"], Some(input));
    let records: Vec<serde_json::Value> = serde_json::from_slice(&json.stdout).unwrap();
    let codes: Vec<&str> = records.iter().map(|r| r["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["LT104", "LT001"]);
    assert_eq!(records[1]["location"]["column"], 22);
    assert_eq!(records[1]["fix"]["edits"][0]["replacement"], "");
    let github = text(&llmtool(&["check", "--format", "github", "-"], Some(input)).stdout);
    assert!(github.contains("\n::error file=<stdin>,line=1,col=22,endLine=1,endColumn=23,title=LT001 (trailing-comma)::"), "{github}");
}

#[test]
fn render_prints_exact_bytes() {
    let out = llmtool(
        &[
            "render",
            example("teach-me-anything.json").to_str().unwrap(),
            "--var",
            "topic=tides=moon",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let prompt = text(&out.stdout);
    assert!(prompt.starts_with("Teach me about tides=moon. I am a curious beginner,"), "{prompt}");
    assert!(
        prompt.ends_with("two short questions."),
        "no newline is added when stdout is not a terminal"
    );
}

#[test]
fn render_multi_select_and_vars_file() {
    let dir = tempfile::tempdir().unwrap();
    let vars = dir.path().join("values.json");
    std::fs::write(&vars, r#"{"agreement": "The supplier may end this at any time.", "focus": ["payment terms", "confidentiality"]}"#).unwrap();
    let tool = example("legal-agreement-review.json");
    let from_file =
        llmtool(&["render", tool.to_str().unwrap(), "--vars", vars.to_str().unwrap()], None);
    assert!(
        text(&from_file.stdout).contains("Look in particular at: payment terms, confidentiality.")
    );
    let flags = llmtool(
        &[
            "render",
            tool.to_str().unwrap(),
            "--vars",
            vars.to_str().unwrap(),
            "--var",
            "focus=liability",
            "--var",
            "focus=termination",
        ],
        None,
    );
    assert!(
        text(&flags.stdout).contains("Look in particular at: liability, termination."),
        "--var wins over --vars"
    );
}

#[test]
fn render_reports_every_value_problem_at_once() {
    let out = llmtool(
        &[
            "render",
            example("strategy-consultant.json").to_str().unwrap(),
            "--var",
            "situaton=x",
            "--var",
            "frameworks=SWAT",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "nothing is rendered when a value is wrong");
    let errors = text(&out.stderr);
    for code in ["LT601", "LT602", "LT603"] {
        assert!(errors.contains(code), "{code} missing from {errors}");
    }
    assert!(errors.contains("did you mean `situation`?"));
    assert!(errors.contains("hint: give a value with `--var NAME=VALUE`"), "{errors}");
    // Items of a multi-select joined with commas: the flag to repeat, written out.
    let out = llmtool(
        &[
            "render",
            example("strategy-consultant.json").to_str().unwrap(),
            "--var",
            "situation=x",
            "--var",
            "frameworks=SWOT,Porter's five forces",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let errors = text(&out.stderr);
    assert!(errors.contains("not joined with commas: `SWOT`, `Porter's five forces`"), "{errors}");
    assert!(
        errors.contains(r"repeat `--var` for each item: --var frameworks=SWOT --var 'frameworks=Porter'\''s five forces'"),
        "{errors}"
    );
}

#[test]
fn small_things_a_new_user_meets() {
    // `check` with no path checks the current folder; `check --fix` points to `fmt --fix`.
    let examples = example("teach-me-anything.json").parent().unwrap().to_owned();
    let out = Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .arg("check")
        .current_dir(&examples)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(" files: 0 errors"), "{}", text(&out.stdout));
    let out = llmtool(&["check", "--fix", "x.json"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("`llmtool fmt --fix PATH` applies the safe fixes"));
    // `render --format json` writes a whole number as the file does.
    let tool = example("teach-me-anything.json");
    let out =
        llmtool(&["render", tool.to_str().unwrap(), "--var", "topic=x", "--format", "json"], None);
    let rendered: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(rendered["parameters"]["max_tokens"].is_u64(), "{rendered}");
    assert!(rendered["parameters"]["temperature"].is_f64(), "{rendered}");
    // `show` ends with the prompt; `providers` never breaks a URL.
    let out = llmtool(&["show", tool.to_str().unwrap()], None);
    assert!(
        text(&out.stdout).contains("\nPrompt\n  Teach me about {{topic}}."),
        "{}",
        text(&out.stdout)
    );
    let out = llmtool(&["providers"], None);
    assert!(
        text(&out.stdout).contains("https://us-central1-aiplatform.googleapis.com"),
        "{}",
        text(&out.stdout)
    );
    // Rules can be left out, by flag or in the config; a name that is no rule is refused.
    let dir = tempfile::tempdir().unwrap();
    let undescribed = br#"{"model_prompt": "Hi {{x}}", "metadata": {"prompt_name": "t", "description": "d",
        "model_version": ["m"], "timestamp": "2026-01-01T00:00:00Z", "variables": [{"name": "x", "type": "text"}]}}"#;
    let strict = ["check", "--strict", "-"];
    assert_eq!(llmtool(&strict, Some(undescribed)).status.code(), Some(1));
    let ignored = llmtool(&[&strict[..], &["--ignore", "LT215"]].concat(), Some(undescribed));
    assert_eq!(ignored.status.code(), Some(0), "{}", text(&ignored.stdout));
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[check]\nignore = [\"missing-variable-description\"]\n").unwrap();
    let configured = [&strict[..], &["--config", config.to_str().unwrap()]].concat();
    assert_eq!(llmtool(&configured, Some(undescribed)).status.code(), Some(0));
    let unknown = llmtool(&["check", "--ignore", "LT2155", "-"], Some(undescribed));
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown.stderr).contains("did you mean `LT215`?"), "{}", text(&unknown.stderr));
    // `fmt --diff` shows what would change and writes nothing; `--fix` says what comment it drops.
    let commented = dir.path().join("commented.json");
    let original = "{\n  // the tone\n  \"model_prompt\": \"Hi\",\n}\n";
    std::fs::write(&commented, original).unwrap();
    let path = commented.to_str().unwrap();
    let diffed = llmtool(&["fmt", "--fix", "--diff", path], None);
    assert_eq!(diffed.status.code(), Some(1));
    assert!(text(&diffed.stdout).contains("-  // the tone\n"), "{}", text(&diffed.stdout));
    assert_eq!(std::fs::read_to_string(&commented).unwrap(), original, "a diff writes nothing");
    let fixed = llmtool(&["fmt", "--fix", path], None);
    assert_eq!(fixed.status.code(), Some(0));
    assert!(
        text(&fixed.stderr).contains(":2: removed the comment `// the tone`"),
        "{}",
        text(&fixed.stderr)
    );
    // A mistyped command gets the one meant.
    let out = llmtool(&["chek"], None);
    assert!(
        text(&out.stderr).contains("a similar subcommand exists: 'check'"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn render_json_and_stdin() {
    let tool = br#"{"model_prompt": "Hi {{ name }}, {{name}}!", "metadata": {"parameters": {"temperature": "0.3"}}}"#;
    let out = llmtool(&["render", "-", "--var", "name=Ana", "--format", "json"], Some(tool));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["prompt"], "Hi Ana, Ana!");
    assert_eq!(json["variables"]["name"], "Ana");
    assert_eq!(json["parameters"]["temperature"], 0.3);
}

#[test]
fn a_placeholder_sent_as_literal_text_is_said_on_stderr() {
    // `{{stlye}}` names no variable, `{{ diff }` lacks a brace: both would reach the model as
    // they are. The prompt is still rendered as the format says, and each is said.
    let tool = br#"{"model_prompt": "In {{stlye}}: {{ diff }", "metadata": {"variables": [
        {"name": "style", "type": "text"}, {"name": "diff", "type": "text"}]}}"#;
    let out = llmtool(&["render", "-", "--var", "style=x", "--var", "diff=y"], Some(tool));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), "In {{stlye}}: {{ diff }");
    let said = text(&out.stderr);
    assert!(said.contains("<stdin>:1:22: `{{stlye}}` is not a declared variable"), "{said}");
    assert!(said.contains("did you mean `{{style}}`?"), "{said}");
    assert!(said.contains("`diff` has a brace missing"), "{said}");
    // `new --prompt` says it before anything runs.
    let out = llmtool(&["new", "--prompt", "Hi {{nme}}", "--var", "name", "-o", "-"], None);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stderr).contains("did you mean `{{name}}`?"), "{}", text(&out.stderr));
    // A tool without such placeholders renders with nothing said.
    let clean = br#"{"model_prompt": "In {{style}}", "metadata": {"variables": [{"name": "style", "type": "text"}]}}"#;
    let out = llmtool(&["render", "-", "--var", "style=x"], Some(clean));
    assert_eq!(text(&out.stderr), "");
}

#[test]
fn render_refuses_a_tool_with_errors() {
    let out = llmtool(
        &["render", "-"],
        Some(br#"{"model_prompt": "Hi", "metadata": {"parameters": {"temperature": 9}}}"#),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("LT301"));
}

#[test]
fn fmt_fix_in_place_and_check() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tool.json");
    std::fs::write(
        &file,
        "{\"metadata\": {\"prompt_name\": \"x\",}, \"model_prompt\": \"Hi\" // note\n}",
    )
    .unwrap();
    let path = file.to_str().unwrap();
    assert_eq!(llmtool(&["fmt", "--check", path], None).status.code(), Some(1));
    let refused = llmtool(&["fmt", path], None);
    assert_eq!(refused.status.code(), Some(1), "syntax problems block plain fmt");
    assert!(text(&refused.stderr).contains("LT001"));
    let fixed = llmtool(&["fmt", "--fix", path], None);
    assert_eq!(fixed.status.code(), Some(0), "{}", text(&fixed.stderr));
    let written = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        written,
        "{\n  \"model_prompt\": \"Hi\",\n  \"metadata\": {\n    \"prompt_name\": \"x\"\n  }\n}\n"
    );
    assert_eq!(llmtool(&["fmt", "--check", path], None).status.code(), Some(0));
}

#[test]
fn fmt_stdin_to_stdout() {
    let out =
        llmtool(&["fmt", "-"], Some(br#"{"metadata":{"model_version":"m"},"model_prompt":"x"}"#));
    assert_eq!(
        text(&out.stdout),
        "{\n  \"model_prompt\": \"x\",\n  \"metadata\": {\n    \"model_version\": [\"m\"]\n  }\n}\n"
    );
}

#[test]
fn new_writes_a_strictly_valid_canonical_tool() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.json");
    let path = file.to_str().unwrap();
    let out = llmtool(
        &[
            "new",
            "Release Notes",
            "--var",
            "changes",
            "--select",
            "tone=formal,casual",
            "--multi",
            "parts=fixes,features",
            "-o",
            path,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let check = llmtool(&["check", "--strict", path], None);
    assert_eq!(check.status.code(), Some(0), "{}", text(&check.stdout));
    assert_eq!(llmtool(&["fmt", "--check", path], None).status.code(), Some(0));
    assert_eq!(
        llmtool(&["new", "X", "-o", path], None).status.code(),
        Some(2),
        "no silent overwrite"
    );
}

#[test]
fn show_summarizes() {
    let out = llmtool(&["show", example("pair-programmer.json").to_str().unwrap()], None);
    let summary = text(&out.stdout);
    for needle in [
        "Pair Programmer",
        "single-select",
        "(required)",
        "embedded PNG image, 256x256",
        "temperature",
        "code, language Python",
    ] {
        assert!(summary.contains(needle), "{needle} missing from\n{summary}");
    }
}

#[test]
fn completions_and_help() {
    let bash = llmtool(&["completions", "bash"], None);
    assert!(text(&bash.stdout).contains("_llmtool"));
    for command in ["check", "fmt", "render", "show", "new", "completions"] {
        let help = text(&llmtool(&[command, "--help"], None).stdout);
        assert!(help.contains("Example"), "{command} --help has no examples");
    }
    assert!(text(&llmtool(&["--version"], None).stdout).starts_with("llmtool "));
}

/// Built in a git checkout, `--version` names the commit and its date, as rustc's does.
#[test]
fn version_names_the_commit() {
    let git = |args: &[&str]| {
        let out = Command::new("git").args(args).output().expect("git runs");
        String::from_utf8(out.stdout).expect("UTF-8").trim().to_owned()
    };
    let (commit, date) =
        (git(&["rev-parse", "--short=12", "HEAD"]), git(&["log", "-1", "--format=%cs"]));
    let expected = format!("llmtool {} ({commit} {date})\n", env!("CARGO_PKG_VERSION"));
    assert_eq!(text(&llmtool(&["--version"], None).stdout), expected);
}

#[test]
fn closed_pipe_is_not_an_error() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .args(["completions", "zsh"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn fmt_fix_applies_semantic_fixes() {
    let input = r#"{"model_prompt": "{{tono}} {{tags}}", "metadata": {"parameters": {"temperature": "0.7"},
        "variables": [{"name": "tono", "type": "texto"},
                      {"name": "tags", "type": "multi-select", "default": "a", "allowed_values": ["a", "b", "a"]}]}}"#;
    let out = llmtool(&["fmt", "--fix", "-"], Some(input.as_bytes()));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let fixed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let meta = &fixed["metadata"];
    assert_eq!(meta["parameters"]["temperature"], 0.7);
    assert_eq!(meta["variables"][0]["type"], "text");
    assert_eq!(meta["variables"][1]["default"], serde_json::json!(["a"]));
    assert_eq!(meta["variables"][1]["allowed_values"], serde_json::json!(["a", "b"]));
}

#[test]
fn an_unknown_type_is_one_diagnostic_and_fmt_fix_renames_another_spelling() {
    let input = r#"{"model_prompt": "{{areas}} {{tone}}", "metadata": {"prompt_name": "t", "description": "d",
        "model_version": ["m"], "timestamp": "2026-01-01T00:00:00Z",
        "variables": [{"name": "areas", "type": "multiselect", "description": "x", "allowed_values": ["docs", "tests"], "default": ["docs"]},
                      {"name": "tone", "type": "mutli-select", "description": "x", "allowed_values": ["a"], "default": ["a"]}]}}"#;
    let checked = llmtool(&["check", "--format", "json", "-"], Some(input.as_bytes()));
    let found: serde_json::Value = serde_json::from_slice(&checked.stdout).unwrap();
    let codes: Vec<&str> =
        found.as_array().unwrap().iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["LT204", "LT204"], "no cascade calling the variables text: {found}");
    let out = llmtool(&["fmt", "--fix", "-"], Some(input.as_bytes()));
    let fixed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let variables = &fixed["metadata"]["variables"];
    assert_eq!(variables[0]["type"], "multi-select", "another spelling is fixed");
    assert_eq!(variables[1]["type"], "mutli-select", "a guess is a suggestion, never applied");
}

#[test]
fn an_import_asks_for_what_the_source_asks_for_and_keeps_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("helper.prompty");
    std::fs::write(
        &source,
        "---\ninputs:\n  question:\n    type: string\n---\nuser:\n{{question}}\n",
    )
    .unwrap();
    let out = llmtool(&["import", source.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let tool: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let metadata = &tool["metadata"];
    assert_eq!(metadata["prompt_name"], "helper", "named after its file: {tool}");
    assert!(metadata["timestamp"].as_str().is_some_and(|t| t.ends_with('Z')), "{tool}");
    assert!(metadata["variables"][0].get("default").is_none(), "no default invented: {tool}");
    // So a missing value is asked for, not rendered as nothing.
    let imported = dir.path().join("helper.json");
    std::fs::write(&imported, &out.stdout).unwrap();
    let rendered = llmtool(&["render", imported.to_str().unwrap()], None);
    assert_eq!(rendered.status.code(), Some(1));
    assert!(
        text(&rendered.stderr).contains("no value for `question`"),
        "{}",
        text(&rendered.stderr)
    );
}

#[test]
fn an_import_that_check_would_refuse_writes_nothing_and_says_where_in_the_source() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("hot.prompt");
    std::fs::write(&source, "---\nconfig:\n  temperature: 3\n---\nHi {{name}}\n").unwrap();
    let out = llmtool(&["import", source.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty(), "nothing written: {}", text(&out.stdout));
    let said = text(&out.stderr);
    assert!(said.contains("error[LT301]") && said.contains("hot.prompt:3:3"), "{said}");

    // Every form that carries settings, a Semantic Kernel function's folder among them: a
    // temperature of 11 is refused where the source writes it.
    let kernel = dir.path().join("kernel");
    std::fs::create_dir(&kernel).unwrap();
    std::fs::write(kernel.join("skprompt.txt"), "Hi {{$name}}").unwrap();
    std::fs::write(
        kernel.join("config.json"),
        "{\n  \"description\": \"Greets\",\n  \"execution_settings\": {\"default\": {\"temperature\": 11}}\n}\n",
    )
    .unwrap();
    let sources = [
        ("hot.yaml", "prompt: Summarise $input\noptions:\n  temperature: 11\n", "hot.yaml:3:3"),
        (
            "hot.prompty",
            "---\nname: Hot\nmodel:\n  parameters:\n    temperature: 11\n---\nuser:\nHi\n",
            "hot.prompty:5:5",
        ),
        (
            "hot-kernel.yaml",
            "name: hot\ntemplate: Hi {{$name}}\nexecution_settings:\n  default:\n    temperature: 11\n",
            "hot-kernel.yaml:5:5",
        ),
    ];
    for (file, source, _) in sources {
        std::fs::write(dir.path().join(file), source).unwrap();
    }
    let paths = sources.map(|(file, _, at)| (dir.path().join(file), at));
    for (path, at) in
        paths.iter().map(|(p, at)| (p.as_path(), *at)).chain([(kernel.as_path(), "config.json:3:")])
    {
        let out = llmtool(&["import", path.to_str().unwrap()], None);
        let said = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{}: {said}", path.display());
        assert!(
            out.stdout.is_empty(),
            "{}: nothing written: {}",
            path.display(),
            text(&out.stdout)
        );
        assert!(said.contains("error[LT301]") && said.contains(at), "{}: {said}", path.display());
    }
}

#[test]
fn a_prompty_file_reads_the_inputs_it_names_beside_it_and_nothing_outside_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("prompts");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("schema.json"), r#"[{"name": "q", "kind": "string"}]"#).unwrap();
    std::fs::write(dir.path().join("outside.json"), "[]").unwrap();
    let prompty =
        |reference: &str| format!("---\ninputs: ${{file:{reference}}}\n---\nuser:\n{{{{q}}}}\n");
    let source = folder.join("ask.prompty");
    std::fs::write(&source, prompty("schema.json")).unwrap();
    let out = llmtool(&["import", source.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("\"name\": \"q\""), "{}", text(&out.stdout));

    std::fs::write(&source, prompty("../outside.json")).unwrap();
    let out = llmtool(&["import", source.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("ask.prompty:2:9"), "{}", text(&out.stderr));
    // From standard input there is no folder to read from.
    let out =
        llmtool(&["import", "-", "--from", "prompty"], Some(prompty("schema.json").as_bytes()));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("not read from a file"), "{}", text(&out.stderr));
}

#[test]
fn export_import_and_convert_round_trip() {
    let consultant = example("strategy-consultant.json");
    let exported = llmtool(&["export", consultant.to_str().unwrap(), "--to", "anthropic"], None);
    assert_eq!(exported.status.code(), Some(0), "{}", text(&exported.stderr));
    // The fields the target has no place for, in one line.
    let said = text(&exported.stderr);
    assert!(said.contains(": anthropic has no place for `model_prompt`, `version`,"), "{said}");
    assert_eq!(said.lines().count(), 1, "{said}");
    let spec: serde_json::Value = serde_json::from_slice(&exported.stdout).unwrap();
    assert_eq!(spec["name"], "strategy_consultant");
    assert_eq!(spec["input_schema"]["required"], serde_json::json!(["situation"]));

    // The format is detected; the imported file checks clean.
    let imported = llmtool(&["import", "-"], Some(&exported.stdout));
    assert_eq!(imported.status.code(), Some(0), "{}", text(&imported.stderr));
    let checked = llmtool(&["check", "-"], Some(&imported.stdout));
    assert_eq!(checked.status.code(), Some(0), "{}", text(&checked.stdout));

    let converted = llmtool(&["convert", "-", "--to", "gemini"], Some(&exported.stdout));
    assert_eq!(converted.status.code(), Some(0), "{}", text(&converted.stderr));
    let declaration: serde_json::Value = serde_json::from_slice(&converted.stdout).unwrap();
    assert_eq!(declaration["parameters"]["properties"]["frameworks"]["type"], "ARRAY");
    assert!(text(&converted.stderr).contains("LT705"));
}

#[test]
fn elisp_export_import_and_convert() {
    let teach = example("teach-me-anything.json");
    let args =
        ["export", teach.to_str().unwrap(), "--to", "gptel", "--function", "my/teach", "--async"];
    let exported = llmtool(&args, None);
    assert_eq!(exported.status.code(), Some(0), "{}", text(&exported.stderr));
    let form = text(&exported.stdout);
    assert!(form.starts_with("(gptel-make-tool\n :name \"teach_me_anything\""), "{form}");
    assert!(form.contains(":function #'my/teach\n :async t)"), "{form}");

    // An elisp source is detected; its diagnostics point into the form.
    let spec = llmtool(&["convert", "-", "--to", "anthropic"], Some(&exported.stdout));
    assert_eq!(spec.status.code(), Some(0), "{}", text(&spec.stderr));
    assert!(text(&spec.stderr).contains("warning[LT701]: `:async` is not carried"));
    let spec: serde_json::Value = serde_json::from_slice(&spec.stdout).unwrap();
    assert_eq!(spec["name"], "teach_me_anything");
    let imported = llmtool(&["import", "-", "--from", "llm-el"], Some(&exported.stdout));
    assert_eq!(imported.status.code(), Some(0), "{}", text(&imported.stderr));
    let checked = llmtool(&["check", "-"], Some(&imported.stdout));
    assert_eq!(checked.status.code(), Some(0), "{}", text(&checked.stdout));

    let broken = llmtool(&["import", "-"], Some(b"(gptel-make-tool\n :name name-variable)"));
    assert_eq!(broken.status.code(), Some(1));
    let report = text(&broken.stderr);
    assert!(report.contains("error[LT704]") && report.contains(":2:8"), "{report}");

    let bad_symbol =
        llmtool(&["export", teach.to_str().unwrap(), "--to", "llm-el", "--function", "a b"], None);
    assert_eq!(bad_symbol.status.code(), Some(2), "{}", text(&bad_symbol.stderr));
}

#[test]
fn prompt_files_export_import_and_convert() {
    let image = example("image-prompt-writer.json");
    let prompty = llmtool(&["export", image.to_str().unwrap(), "--to", "prompty"], None);
    assert_eq!(prompty.status.code(), Some(0), "{}", text(&prompty.stderr));
    assert!(
        text(&prompty.stderr).contains("warning[LT702]: variable `aspect ratio` is `aspect_ratio`")
    );
    assert!(text(&prompty.stdout).contains("{{ aspect_ratio }}"));
    // Detected by its front matter; the tool comes back exactly.
    let back = llmtool(&["import", "-"], Some(&prompty.stdout));
    assert_eq!(back.status.code(), Some(0), "{}", text(&back.stderr));
    let canonical = llmtool(&["fmt", "-"], Some(&std::fs::read(&image).unwrap()));
    assert_eq!(text(&back.stdout), text(&canonical.stdout));
    // A prompt file converts to a function spec, and a function spec to a prompt file.
    let dotprompt =
        llmtool(&["convert", "-", "--from", "prompty", "--to", "dotprompt"], Some(&prompty.stdout));
    assert!(text(&dotprompt.stdout).contains("{{[aspect ratio]}}"), "{}", text(&dotprompt.stdout));
    let spec = llmtool(&["convert", "-", "--to", "openai"], Some(&dotprompt.stdout));
    assert_eq!(spec.status.code(), Some(0), "{}", text(&spec.stderr));
    let spec: serde_json::Value = serde_json::from_slice(&spec.stdout).unwrap();
    assert_eq!(spec["function"]["name"], "image_prompt_writer");
    let refused =
        llmtool(&["import", "-", "--from", "dotprompt"], Some(b"---\n---\n{{#if x}}y{{/if}}"));
    assert_eq!(refused.status.code(), Some(1));
    assert!(text(&refused.stderr).contains("error[LT704]"), "{}", text(&refused.stderr));
}

#[test]
fn llm_templates_and_kernel_folders_are_written_out_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let image = example("image-prompt-writer.json");
    let canonical = llmtool(&["fmt", "-"], Some(&std::fs::read(&image).unwrap()));
    // `--out` writes a file named after the tool, ready for `llm -t`.
    let llm =
        llmtool(&["export", image.to_str().unwrap(), "--to", "llm-template", "--out", out], None);
    assert_eq!(llm.status.code(), Some(0), "{}", text(&llm.stderr));
    let file = dir.path().join("image_prompt_writer.yaml");
    assert!(
        text(&llm.stderr).contains(&format!("wrote {}", file.display())),
        "{}",
        text(&llm.stderr)
    );
    assert!(std::fs::read_to_string(&file).unwrap().contains("Aspect ratio: $aspect_ratio."));
    let back = llmtool(&["import", file.to_str().unwrap()], None);
    assert_eq!(text(&back.stdout), text(&canonical.stdout), "{}", text(&back.stderr));
    // A Semantic Kernel function is a folder: it needs `--out`, and is read back from the
    // folder or either of its files.
    let nowhere = llmtool(&["export", image.to_str().unwrap(), "--to", "semantic-kernel"], None);
    assert_eq!(nowhere.status.code(), Some(2));
    assert!(text(&nowhere.stderr).contains("--out"), "{}", text(&nowhere.stderr));
    let sk = llmtool(
        &[
            "export",
            image.to_str().unwrap(),
            "--to",
            "semantic-kernel",
            "--out",
            out,
            "--name",
            "Imagine",
        ],
        None,
    );
    assert_eq!(sk.status.code(), Some(0), "{}", text(&sk.stderr));
    let folder = dir.path().join("Imagine");
    let prompt = std::fs::read_to_string(folder.join("skprompt.txt")).unwrap();
    assert!(prompt.contains("Aspect ratio: {{$aspect_ratio}}."), "{prompt}");
    for path in [folder.clone(), folder.join("config.json"), folder.join("skprompt.txt")] {
        let back = llmtool(&["import", path.to_str().unwrap()], None);
        assert_eq!(text(&back.stdout), text(&canonical.stdout), "{}", text(&back.stderr));
    }
    // From an `llm` template on standard input (detected by its keys) to a kernel folder.
    let converted = llmtool(
        &["convert", "-", "--to", "semantic-kernel", "--out", out],
        Some(b"prompt: Explain $topic to a $level.\ndefaults:\n  level: child\n"),
    );
    assert_eq!(converted.status.code(), Some(0), "{}", text(&converted.stderr));
    let prompt = std::fs::read_to_string(dir.path().join("tool/skprompt.txt")).unwrap();
    // `llm` adds the text it is given after a prompt with no `$input`: so does the import.
    assert_eq!(prompt, "Explain {{$topic}} to a {{$level}}.\n{{$input}}");
    let bad_name = llmtool(
        &[
            "export",
            image.to_str().unwrap(),
            "--to",
            "semantic-kernel",
            "--out",
            out,
            "--name",
            "a-b",
        ],
        None,
    );
    assert_eq!(bad_name.status.code(), Some(2));
}

#[test]
fn import_refuses_what_it_cannot_read() {
    let not_json = llmtool(&["import", "-"], Some(b"{ nope"));
    assert_eq!(not_json.status.code(), Some(1));
    assert!(text(&not_json.stderr).contains("LT704"), "{}", text(&not_json.stderr));
    let unknown = llmtool(&["import", "-"], Some(b"{\"hello\": 1}"));
    assert_eq!(unknown.status.code(), Some(1));
    assert!(text(&unknown.stderr).contains("--from"));
    let wrong = llmtool(&["import", "-", "--from", "openai"], Some(b"{\"name\": \"x\"}"));
    assert_eq!(wrong.status.code(), Some(1));
    assert!(text(&wrong.stderr).contains("no `function` object"));
    let bad_name = llmtool(
        &[
            "export",
            example("teach-me-anything.json").to_str().unwrap(),
            "--to",
            "openai",
            "--name",
            "has space",
        ],
        None,
    );
    assert_eq!(bad_name.status.code(), Some(2));
}

#[test]
fn a_file_of_several_tools_imports_all_into_a_folder_or_one_by_name() {
    let list = br#"{"jsonrpc": "2.0", "id": 1, "result": {"tools": [
        {"name": "get_weather", "description": "The weather.", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}},
        {"name": "get_time", "description": "The time.", "inputSchema": {"type": "object", "properties": {}}}
    ]}}"#;
    let refused = llmtool(&["import", "-"], Some(list));
    assert_eq!(refused.status.code(), Some(2));
    let message = text(&refused.stderr);
    assert!(message.contains("2 tools (get_weather, get_time)"), "{message}");
    assert!(message.contains("--out DIR") && message.contains("--name NAME"), "{message}");

    let one = llmtool(&["import", "-", "--name", "get_time"], Some(list));
    assert_eq!(one.status.code(), Some(0), "{}", text(&one.stderr));
    assert!(text(&one.stdout).contains("\"prompt_name\": \"Get time\""), "{}", text(&one.stdout));

    let folder = tempfile::tempdir().unwrap();
    let all = llmtool(&["import", "-", "--out", folder.path().to_str().unwrap()], Some(list));
    assert_eq!(all.status.code(), Some(0), "{}", text(&all.stderr));
    let mut written: Vec<String> = std::fs::read_dir(folder.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    assert_eq!(written, ["get_time.json", "get_weather.json"]);
    for file in &written {
        let checked = llmtool(&["check", folder.path().join(file).to_str().unwrap()], None);
        assert_eq!(checked.status.code(), Some(0), "{file}: {}", text(&checked.stdout));
    }
}

#[test]
fn check_reads_test_files_with_their_tool_and_no_command_takes_them_for_tools() {
    let suite = repo().join("crates/llmtool-format/tests/fixtures/suite");
    let good = llmtool(&["check", suite.join("good.tests.yaml").to_str().unwrap()], None);
    assert_eq!(good.status.code(), Some(0), "{}", text(&good.stdout));
    let all = llmtool(&["check", "--format", "json", suite.to_str().unwrap()], None);
    assert_eq!(all.status.code(), Some(1));
    let records: Vec<serde_json::Value> = serde_json::from_slice(&all.stdout).unwrap();
    let codes: Vec<&str> = records.iter().filter_map(|r| r["code"].as_str()).collect();
    for code in ["LT801", "LT802", "LT803", "LT804", "LT805"] {
        assert!(codes.contains(&code), "{code} missing from {codes:?}");
    }
    // A test file whose tool is not there.
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("lone.tests.json"), r#"{"cases": []}"#).unwrap();
    let lone = llmtool(&["check", folder.path().to_str().unwrap()], None);
    assert!(text(&lone.stdout).contains("error[LT806]"), "{}", text(&lone.stdout));
    // Commands that want tools skip test files in folders.
    let fmt = llmtool(&["fmt", "--check", folder.path().to_str().unwrap()], None);
    assert_eq!(fmt.status.code(), Some(0), "{}", text(&fmt.stderr));
}

#[test]
fn no_model_is_replaced_without_a_word() {
    let dir = tempfile::tempdir().unwrap();
    let tool = dir.path().join("t.json");
    let body = r#"{"model_prompt": "Hi", "metadata": {"model_version": ["gpt-4o-mini"]}}"#;
    std::fs::write(&tool, body).unwrap();
    let run = |args: &[&str], key: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_llmtool"));
        command
            .args(args)
            .env("XDG_CONFIG_HOME", "/nonexistent")
            .env("LLMTOOL_DATA_DIR", dir.path())
            .env("LLMTOOL_NO_LOG", "1")
            .env_remove("LLMTOOL_MODEL")
            .stdin(Stdio::null());
        for variable in ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"]
        {
            command.env_remove(variable);
        }
        if let Some(key) = key {
            command.env("OPENAI_API_KEY", key);
        }
        command.output().unwrap()
    };
    // The tool's model has no key here: the local model runs instead, and says so.
    let out = run(&["run", tool.to_str().unwrap(), "--dry-run"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(said.contains("note: the tool's models cannot run here"), "{said}");
    assert!(said.contains("OPENAI_API_KEY is not set") && said.contains("smollm2"), "{said}");
    // A model the user names is never swapped for the provider's default.
    let args = [
        "run",
        tool.to_str().unwrap(),
        "--dry-run",
        "--provider",
        "openai",
        "--model",
        "claude-opus-4-1",
    ];
    let out = run(&args, Some("sk-test-key-1234"));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let said = text(&out.stderr);
    assert!(said.contains("claude-opus-4-1") && said.contains("cannot serve it"), "{said}");
}

#[test]
fn local_models_live_in_the_data_directory_like_the_run_log() {
    let installed =
        llmtool_local::store::models_dir().unwrap().join(llmtool_local::store::DEFAULT_MODEL.file);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let model = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_llmtool"))
            .args(args)
            .env("LLMTOOL_DATA_DIR", &data)
            .env_remove("LLMTOOL_MODELS_DIR")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let pulled = model(&["model", "pull", "--from", installed.to_str().unwrap()]);
    assert_eq!(pulled.status.code(), Some(0), "{}", text(&pulled.stderr));
    let expected = data.join("models").join(llmtool_local::store::DEFAULT_MODEL.file);
    assert_eq!(text(&pulled.stdout).trim(), expected.to_str().unwrap());
    assert!(expected.is_file());
    let listed = text(&model(&["model", "list"]).stdout);
    assert!(listed.contains(expected.to_str().unwrap()), "{listed}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&data).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "the data directory, which also keeps runs, is private");
    }
}

#[test]
fn an_openai_stored_prompt_copied_out_is_imported_and_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let copied = dir.path().join("support-reply.json");
    let prompt = serde_json::json!({
        "id": "pmpt_68b0c29740048196", "version": "3", "name": "Support reply", "model": "gpt-4.1",
        "instructions": "You help customers of {{company}}.",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "Issue: {{ issue }}"}]}],
        "variables": {"company": "Acme", "issue": "a refund"},
        "tools": [{"type": "web_search"}],
        "temperature": 0.3
    });
    std::fs::write(&copied, prompt.to_string()).unwrap();
    let out = llmtool(&["import", copied.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let tool: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        tool["model_prompt"],
        "system:\nYou help customers of {{company}}.\n\nuser:\nIssue: {{issue}}"
    );
    assert_eq!(tool["metadata"]["model_version"], serde_json::json!(["gpt-4.1"]));
    assert!(text(&out.stderr).contains("`tools` is left out"), "{}", text(&out.stderr));
    let imported = dir.path().join("support-reply.tool.json");
    std::fs::write(&imported, &out.stdout).unwrap();
    let written = llmtool(&["export", imported.to_str().unwrap(), "--to", "openai-prompt"], None);
    assert_eq!(written.status.code(), Some(2), "read only");
}

#[test]
fn a_promptfoo_config_reaches_only_its_folder_and_runs_no_code() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("eval");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(dir.path().join("secret.txt"), "the secret {{x}}").unwrap();
    let config = folder.join("promptfooconfig.yaml");
    let out = dir.path().join("out");
    for (prompts, refused) in [
        ("[file://../secret.txt]", "leads out of the source's folder"),
        ("[file://prompt.js]", "made by a program"),
    ] {
        std::fs::write(&config, format!("prompts: {prompts}\ntests:\n  - vars: {{x: 1}}\n"))
            .unwrap();
        let read = llmtool(
            &[
                "test",
                "--from",
                "promptfoo",
                config.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
            None,
        );
        assert_eq!(read.status.code(), Some(1), "{prompts}: {}", text(&read.stderr));
        assert!(text(&read.stderr).contains(refused), "{prompts}: {}", text(&read.stderr));
        assert!(!out.exists(), "nothing written");
    }
    // A code assertion is left out, never run: the marker file is never made.
    let marker = dir.path().join("ran");
    let code = format!("require('fs').writeFileSync('{}', '')", marker.display());
    std::fs::write(
        &config,
        format!("prompts: ['Say {{{{x}}}}']\ntests:\n  - vars: {{x: hi}}\n    assert:\n      - type: javascript\n        value: \"{code}\"\n"),
    )
    .unwrap();
    let read = llmtool(
        &["test", "--from", "promptfoo", config.to_str().unwrap(), "--out", out.to_str().unwrap()],
        None,
    );
    assert_eq!(read.status.code(), Some(0), "{}", text(&read.stderr));
    assert!(text(&read.stderr).contains("(javascript) is left out"), "{}", text(&read.stderr));
    let tests = std::fs::read_to_string(out.join("prompt-1.tests.json")).unwrap();
    assert!(!tests.contains("writeFileSync") && !marker.exists(), "{tests}");
}
