//! `llmtool run` of smart tools end to end: the code's result, its `llm()` calls answered by
//! the mock provider (priced, logged), failures located in the file, the limits, and the
//! Python runtime never fetched without consent.
//!
//! The runtime is the one the test command installs (`LLMTOOL_SANDBOX_DIR`).

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use llmtool_testkit::{Mock, Reply};
use serde_json::{Value, json};

const KEY: &str = "sk-smart-test-8c21";

fn sandbox_dir() -> PathBuf {
    std::env::var_os("LLMTOOL_SANDBOX_DIR")
        .map(PathBuf::from)
        .expect("LLMTOOL_SANDBOX_DIR names the installed Python runtime (scripts/test.sh pulls it)")
}

/// A test's own data directory and config (the mock as provider `mock`, priced).
struct Setup {
    data: tempfile::TempDir,
    config: PathBuf,
}

impl Setup {
    fn new(mock: Option<&Mock>) -> Setup {
        let data = tempfile::tempdir().unwrap();
        let config = data.path().join("config.toml");
        let url = mock.map_or("http://127.0.0.1:9".to_owned(), |m| m.url.clone());
        let text = format!(
            "default_model = \"mock/m\"\n[providers.mock]\napi = \"openai\"\nbase_url = \"{url}/v1\"\napi_key_env = \"MOCK_KEY\"\njson_schema = false\n[prices.\"mock/m\"]\ninput = 1.0\noutput = 2.0\n"
        );
        std::fs::write(&config, text).unwrap();
        Setup { data, config }
    }

    fn tool(&self, name: &str, tool: &Value) -> PathBuf {
        let path = self.data.path().join(name);
        std::fs::write(&path, serde_json::to_string_pretty(tool).unwrap()).unwrap();
        path
    }

    async fn llmtool_in(&self, sandbox: &Path, args: &[&str]) -> Output {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_llmtool"));
        command
            .args(args)
            .env("NO_COLOR", "1")
            .env("XDG_CONFIG_HOME", "/nonexistent")
            .env("LLMTOOL_DATA_DIR", self.data.path())
            .env("LLMTOOL_CONFIG", &self.config)
            .env("LLMTOOL_SANDBOX_DIR", sandbox)
            .env("MOCK_KEY", KEY)
            .env_remove("LLMTOOL_NO_LOG")
            .env_remove("LLMTOOL_MODEL")
            .stdin(Stdio::null());
        command.output().await.unwrap()
    }

    async fn llmtool(&self, args: &[&str]) -> Output {
        self.llmtool_in(&sandbox_dir(), args).await
    }

    /// A sandbox folder of this test's own: the installed runtime (hard links to its module
    /// and compiled form, or copies) and no requirements fetched yet.
    fn own_sandbox(&self) -> PathBuf {
        use std::os::unix::fs::PermissionsExt as _;
        let own = self.data.path().join("sandbox");
        let compiled = own.join("compiled");
        std::fs::create_dir_all(&compiled).unwrap();
        std::fs::set_permissions(&compiled, std::fs::Permissions::from_mode(0o700)).unwrap();
        let shared = sandbox_dir();
        let mut files = vec![std::path::PathBuf::from("python-3.12.0.wasm")];
        for entry in std::fs::read_dir(shared.join("compiled")).unwrap() {
            files.push(Path::new("compiled").join(entry.unwrap().file_name()));
        }
        for file in files {
            let (from, to) = (shared.join(&file), own.join(&file));
            if std::fs::hard_link(&from, &to).is_err() {
                std::fs::copy(&from, &to).unwrap();
            }
        }
        own
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn smart(code: &str, variables: &[&str]) -> Value {
    let variables: Vec<Value> =
        variables.iter().map(|name| json!({ "name": name, "description": "a value" })).collect();
    json!({
        "version": "0.1",
        "metadata": {
            "tool_name": "Test tool",
            "tool_code": code,
            "description": "A smart tool under test",
            "model_version": ["mock/m"],
            "variables": variables,
            "expected_output": "text",
            "timestamp": "2026-11-27T00:00:00Z"
        }
    })
}

/// A whole (not streamed) answer: what an `llm()` call asks for.
fn answer(text: &str) -> Reply {
    let body = json!({
        "choices": [{ "message": { "role": "assistant", "content": text }, "finish_reason": "stop" }],
        "usage": { "prompt_tokens": 20, "completion_tokens": 6 }
    });
    Reply::json(200, body.to_string())
}

const COUNT_AND_SUMMARISE: &str = "def execute(variables):\n    text = variables['text']\n    words = len(text.split())\n    print('counted', words)\n    summary = llm('Summarise in one sentence: ' + text, temperature=0)\n    return f'{words} words. {summary}'\n";

#[tokio::test(flavor = "multi_thread")]
async fn a_smart_tool_counts_words_and_asks_the_model_for_a_summary() {
    let mock = Mock::start(vec![answer("A fox jumps over a dog.")]).await;
    let setup = Setup::new(Some(&mock));
    let tool = setup.tool("words.json", &smart(COUNT_AND_SUMMARISE, &["text"]));
    let text_value = "text=The quick brown fox jumps over the lazy dog";
    let run = setup.llmtool(&["run", tool.to_str().unwrap(), "--var", text_value]).await;
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    assert_eq!(text(&run.stdout), "9 words. A fox jumps over a dog.\n");
    assert!(text(&run.stderr).contains("counted 9"), "{}", text(&run.stderr));
    let sent = &mock.requests()[0].body;
    assert_eq!(sent["model"], "m");
    assert_eq!(sent["temperature"], 0.0);
    let prompt = sent["messages"][0]["content"].as_str().unwrap();
    assert_eq!(prompt, "Summarise in one sentence: The quick brown fox jumps over the lazy dog");

    // The call is a run of the tool, priced; the smart run is kept beside it.
    let logs = setup.llmtool(&["logs", "--format", "json"]).await;
    assert_eq!(logs.status.code(), Some(0), "{}", text(&logs.stderr));
    let runs: Vec<Value> = serde_json::from_slice(&logs.stdout).unwrap();
    let providers: Vec<&str> = runs.iter().map(|r| r["provider"].as_str().unwrap()).collect();
    assert_eq!(providers.len(), 2, "{runs:?}");
    assert!(providers.contains(&"sandbox") && providers.contains(&"mock"), "{providers:?}");
    let call = runs.iter().find(|r| r["provider"] == "mock").unwrap();
    assert_eq!(call["tool_name"], "Test tool");
    assert!(call["cost_usd"].as_f64().unwrap() > 0.0, "{call}");
}

/// `llmtool call` runs a smart tool's code with a model's arguments, as `run` does.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_with_a_models_arguments_runs_the_smart_tools_code() {
    let mock = Mock::start(vec![answer("A fox jumps.")]).await;
    let setup = Setup::new(Some(&mock));
    let tool = setup.tool("words.json", &smart(COUNT_AND_SUMMARISE, &["text"]));
    let arguments = r#"{"text": "The quick brown fox jumps"}"#;
    let called = setup.llmtool(&["call", tool.to_str().unwrap(), arguments]).await;
    assert_eq!(called.status.code(), Some(0), "{}", text(&called.stderr));
    assert_eq!(text(&called.stdout), "5 words. A fox jumps.\n");
    let wrong = setup.llmtool(&["call", tool.to_str().unwrap(), r#"{"text": 5, "x": 1}"#]).await;
    assert_eq!(wrong.status.code(), Some(1), "{}", text(&wrong.stderr));
    assert_eq!(mock.requests().len(), 1, "a refused call runs nothing");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_seeds_example_shape_runs_as_written() {
    // Every field in `metadata`, as the seeds' published example keeps them.
    let setup = Setup::new(None);
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../llmtool-format/tests/fixtures/valid/smart-tool.json"
    );
    let run = setup.llmtool(&["run", fixture, "--var", "text=one two three four"]).await;
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    assert_eq!(text(&run.stdout), "4 words\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_smart_tools_own_flat_layout_runs_and_keeps_its_layout() {
    // The smart tools' format lays a tool out without `metadata`, `creator` a string and
    // `model_version` a string; it was read as twelve unknown keys and ran without variables.
    let setup = Setup::new(None);
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../llmtool-format/tests/fixtures/valid/smart-flat-layout.json"
    );
    let checked = setup.llmtool(&["check", fixture]).await;
    assert_eq!(checked.status.code(), Some(0), "{}", text(&checked.stderr));
    assert!(!text(&checked.stdout).contains("LT103"), "{}", text(&checked.stdout));
    let run = setup.llmtool(&["run", fixture, "--var", "text=one two three"]).await;
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    assert_eq!(text(&run.stdout), "3\n");
    let formatted = setup.llmtool(&["fmt", fixture, "--diff"]).await;
    let said = text(&formatted.stdout) + &text(&formatted.stderr);
    assert!(!said.contains("\"metadata\""), "fmt keeps the flat layout: {said}");
}

#[tokio::test(flavor = "multi_thread")]
async fn json_output_gives_the_result_the_calls_and_their_cost() {
    let mock = Mock::start(vec![answer("Short.")]).await;
    let setup = Setup::new(Some(&mock));
    let tool = setup.tool("words.json", &smart(COUNT_AND_SUMMARISE, &["text"]));
    let run = setup
        .llmtool(&["run", tool.to_str().unwrap(), "--var", "text=a b c", "--format", "json"])
        .await;
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let shown: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(shown["output"], "3 words. Short.");
    assert_eq!(shown["printed"], "counted 3\n");
    assert_eq!(shown["llm_calls"][0]["provider"], "mock");
    assert_eq!(shown["llm_calls"][0]["input_tokens"], 20);
    // 20 tokens in at $1/M and 6 out at $2/M.
    assert!((shown["cost"].as_f64().unwrap() - 32e-6).abs() < 1e-12, "{shown}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_exception_is_exit_1_and_points_at_its_line_in_the_file() {
    let setup = Setup::new(None);
    let code = "def execute(variables):\n    value = variables['text']\n    return value[100]\n";
    let tool = setup.tool("fails.json", &smart(code, &["text"]));
    let run = setup.llmtool(&["run", tool.to_str().unwrap(), "--var", "text=short"]).await;
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    let stderr = text(&run.stderr);
    assert!(stderr.contains("raised IndexError: string index out of range"), "{stderr}");
    let file = std::fs::read_to_string(&tool).unwrap();
    let line = file.lines().position(|l| l.contains("tool_code")).unwrap() + 1;
    let column = file.lines().nth(line - 1).unwrap().find("    return value").unwrap() + 1;
    let at = format!("fails.json:{line}:{column} (line 3 of tool_code)");
    assert!(stderr.contains(&at), "{at} in {stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn code_that_does_not_parse_never_runs() {
    let setup = Setup::new(None);
    let tool = setup.tool("broken.json", &smart("def execute(variables)\n    return 1\n", &[]));
    let run = setup.llmtool(&["run", tool.to_str().unwrap()]).await;
    assert_eq!(run.status.code(), Some(1));
    assert!(text(&run.stderr).contains("LT901"), "{}", text(&run.stderr));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cpu_limit_stops_an_endless_loop() {
    let setup = Setup::new(None);
    let tool = setup
        .tool("loop.json", &smart("def execute(variables):\n    while True:\n        pass\n", &[]));
    let run = setup.llmtool(&["run", tool.to_str().unwrap(), "--cpu-limit", "1"]).await;
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    assert!(text(&run.stderr).contains("more than 1 s of CPU time"), "{}", text(&run.stderr));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_runtime_is_never_fetched_unasked() {
    let setup = Setup::new(None);
    let tool = setup.tool("words.json", &smart("def execute(variables):\n    return 'x'\n", &[]));
    let empty = tempfile::tempdir().unwrap();
    let run = setup.llmtool_in(empty.path(), &["run", tool.to_str().unwrap()]).await;
    assert_eq!(run.status.code(), Some(2), "{}", text(&run.stderr));
    assert!(text(&run.stderr).contains("llmtool sandbox pull"), "{}", text(&run.stderr));
    assert_eq!(std::fs::read_dir(empty.path()).unwrap().count(), 0, "nothing was fetched");

    // --dry-run shows what `execute` would get, and needs no runtime.
    let tool = setup.tool("vars.json", &smart(COUNT_AND_SUMMARISE, &["text"]));
    let dry = setup
        .llmtool_in(empty.path(), &["run", tool.to_str().unwrap(), "--var", "text=hi", "--dry-run"])
        .await;
    assert_eq!(dry.status.code(), Some(0), "{}", text(&dry.stderr));
    let shown: Value = serde_json::from_slice(&dry.stdout).unwrap();
    assert_eq!(shown["variables"], json!({ "text": "hi" }));
}

#[tokio::test]
async fn a_runtime_not_yet_compiled_is_compiled_once_in_a_folder_named_relatively() {
    use std::os::unix::fs::PermissionsExt as _;
    let setup = Setup::new(None);
    let tool = setup.tool("words.json", &smart("def execute(variables):\n    return 'ok'\n", &[]));
    // The module and wasmtime's unpacked compiler, as a pull leaves them, but no compiled form.
    let own = setup.data.path().join("sandbox");
    std::fs::create_dir_all(&own).unwrap();
    let shared = sandbox_dir();
    for file in ["python-3.12.0.wasm", ".python-3.12.0.wasm.verified"] {
        std::fs::copy(shared.join(file), own.join(file)).unwrap();
    }
    let copied = std::process::Command::new("cp")
        .args(["-a", shared.join("compiler").to_str().unwrap(), own.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(copied.success());
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_llmtool"));
    command
        .args(["run", tool.to_str().unwrap()])
        .current_dir(setup.data.path())
        .env("NO_COLOR", "1")
        .env("LLMTOOL_DATA_DIR", setup.data.path())
        .env("LLMTOOL_CONFIG", &setup.config)
        // Relative: the compiler runs in a folder of its own, and must still find everything.
        .env("LLMTOOL_SANDBOX_DIR", "sandbox")
        .env("LLMTOOL_NO_LOG", "1")
        .stdin(Stdio::null());
    let run = command.output().await.unwrap();
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    assert_eq!(text(&run.stdout).trim(), "ok");
    let compiled: Vec<_> =
        std::fs::read_dir(own.join("compiled")).unwrap().map(|e| e.unwrap()).collect();
    assert_eq!(compiled.len(), 1, "one compiled module, no partial file left");
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&compiled[0].path()), 0o600);
    assert_eq!(mode(&own.join("compiled")), 0o700);
}

/// One JSON-RPC exchange with an `llmtool mcp` over stdio: the answer with the request's id.
fn ask(
    stdin: &mut std::process::ChildStdin,
    lines: &mut impl Iterator<Item = String>,
    message: &Value,
) -> Value {
    use std::io::Write as _;
    writeln!(stdin, "{message}").unwrap();
    stdin.flush().unwrap();
    lines
        .map(|line| serde_json::from_str::<Value>(&line).unwrap())
        .find(|answer| answer["id"] == message["id"])
        .unwrap()
}

/// Calls the one smart tool of `folder` through `llmtool mcp FLAGS folder`; the prompts it
/// lists and the call's result.
fn call_over_mcp(setup: &Setup, folder: &Path, flags: &[&str]) -> (Value, Value) {
    let (prompts, result, _) = call_over_mcp_logging(setup, folder, flags, "error");
    (prompts, result)
}

/// [`call_over_mcp`] with the server's log at `level`; and what it logged.
fn call_over_mcp_logging(
    setup: &Setup,
    folder: &Path,
    flags: &[&str],
    level: &str,
) -> (Value, Value, String) {
    use std::io::{BufRead as _, Read as _, Write as _};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .args(["mcp", "--log-level", level])
        .args(flags)
        .arg(folder)
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env("LLMTOOL_DATA_DIR", setup.data.path())
        .env("LLMTOOL_CONFIG", &setup.config)
        .env("LLMTOOL_SANDBOX_DIR", sandbox_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read as it comes, so that a verbose log never blocks the server on a full pipe.
    let mut stderr = child.stderr.take().unwrap();
    let logged = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut stdin = child.stdin.take().unwrap();
    let mut lines =
        std::io::BufReader::new(child.stdout.take().unwrap()).lines().map(Result::unwrap);
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}});
    ask(&mut stdin, &mut lines, &initialize);
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .unwrap();
    let prompts =
        ask(&mut stdin, &mut lines, &json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}));
    let tools =
        ask(&mut stdin, &mut lines, &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
    let name = tools["result"]["tools"][0]["name"].as_str().unwrap().to_owned();
    let call = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": name, "arguments": {"text": "one two three"}}});
    let result = ask(&mut stdin, &mut lines, &call);
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let logged = logged.join().unwrap();
    (prompts["result"]["prompts"].clone(), result["result"].clone(), logged)
}

/// What a smart tool's code prints (prompts before data-loss prevention, results) stays out
/// of the server's log at every level: at `debug` and below, the WebAssembly host's own
/// tracing logged the guest's standard output and error.
#[test]
fn a_smart_tools_printed_output_is_never_logged() {
    let setup = Setup::new(None);
    let folder = setup.data.path().join("tools");
    std::fs::create_dir_all(&folder).unwrap();
    let code = "import sys\n\ndef execute(variables):\n    print('guest-stdout-7d1e')\n    print('guest-stderr-5b2c', file=sys.stderr)\n    return 'printed'\n";
    std::fs::write(folder.join("printer.json"), smart(code, &["text"]).to_string()).unwrap();
    for level in ["debug", "trace"] {
        let (_, answered, logged) =
            call_over_mcp_logging(&setup, &folder, &["--smart-tools"], level);
        assert_eq!(answered["isError"], false, "{answered}");
        assert!(!logged.is_empty(), "at {level} the server logs something");
        for printed in ["guest-stdout-7d1e", "guest-stderr-5b2c"] {
            assert!(!logged.contains(printed), "at {level}, `{printed}` is in the log:\n{logged}");
        }
    }
}

#[test]
fn an_mcp_server_runs_smart_tools_only_when_its_operator_enables_them() {
    let setup = Setup::new(None);
    let folder = setup.data.path().join("tools");
    std::fs::create_dir_all(&folder).unwrap();
    let code = "def execute(variables):\n    return f\"{len(variables['text'].split())} words\"\n";
    std::fs::write(folder.join("count.json"), smart(code, &["text"]).to_string()).unwrap();

    let (prompts, refused) = call_over_mcp(&setup, &folder, &[]);
    assert_eq!(prompts, json!([]), "a smart tool has no prompt to list");
    assert_eq!(refused["isError"], true, "{refused}");
    let message = refused["content"][0]["text"].as_str().unwrap();
    assert!(message.contains("--smart-tools"), "{message}");

    let (_, answered) = call_over_mcp(&setup, &folder, &["--smart-tools"]);
    assert_eq!(answered["isError"], false, "{answered}");
    assert_eq!(answered["content"][0]["text"], "3 words");
}

fn with_requirements(code: &str, requirements: &[&str]) -> Value {
    let mut tool = smart(code, &["text"]);
    tool["metadata"]["requirements"] = json!(requirements);
    tool
}

#[tokio::test(flavor = "multi_thread")]
async fn pinned_pure_python_requirements_are_fetched_locked_and_importable() {
    let setup = Setup::new(None);
    let code = "import markdown\ndef execute(variables):\n    return markdown.markdown(variables['text'])\n";
    let tool = setup.tool("md.json", &with_requirements(code, &["markdown==3.7"]));
    let path = tool.to_str().unwrap();
    // A sandbox folder where nothing was fetched yet, whatever other runs of the suite did.
    let sandbox = setup.own_sandbox();

    // Not fetched without consent (no terminal to ask, no --yes).
    let lock = setup.data.path().join("md.lock.json");
    let asked = setup.llmtool_in(&sandbox, &["run", path, "--var", "text=# Hi"]).await;
    assert_eq!(asked.status.code(), Some(1), "{}", text(&asked.stderr));
    assert!(text(&asked.stderr).contains("--yes"), "{}", text(&asked.stderr));
    assert!(!lock.exists());

    let run =
        setup.llmtool_in(&sandbox, &["run", path, "--var", "text=# Hi *there*", "--yes"]).await;
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    assert_eq!(text(&run.stdout), "<h1>Hi <em>there</em></h1>\n");
    let locked: Value = serde_json::from_slice(&std::fs::read(&lock).unwrap()).unwrap();
    assert_eq!(locked["requirements"], json!(["markdown==3.7"]));
    assert_eq!(locked["wheels"][0]["file"], "Markdown-3.7-py3-none-any.whl");
    assert_eq!(locked["wheels"][0]["sha256"].as_str().unwrap().len(), 64);

    // Later runs use the locked site folder, fetching nothing.
    let again = setup.llmtool_in(&sandbox, &["run", path, "--var", "text=*again*"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    assert_eq!(text(&again.stdout), "<p><em>again</em></p>\n");

    // The sandbox folder keeps a lock of its own for what it fetched: another file with the
    // same requirements runs on it without asking (and, not asked to fetch, writes nothing);
    // `sandbox pull --requirements` gives it the same lock beside it.
    std::fs::create_dir_all(setup.data.path().join("other")).unwrap();
    let other = setup.tool("other/md.json", &with_requirements(code, &["markdown==3.7"]));
    let other = other.to_str().unwrap();
    let run = setup.llmtool_in(&sandbox, &["run", other, "--var", "text=x"]).await;
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let other_lock = setup.data.path().join("other/md.lock.json");
    assert!(!other_lock.exists(), "a run that was not asked to fetch writes nothing");
    let pulled = setup.llmtool_in(&sandbox, &["sandbox", "pull", "--requirements", other]).await;
    assert_eq!(pulled.status.code(), Some(0), "{}", text(&pulled.stderr));
    let theirs: Value = serde_json::from_slice(&std::fs::read(&other_lock).unwrap()).unwrap();
    assert_eq!(theirs, locked);

    // A lock beside a tool that names other wheels than this machine's record is refused.
    let mut forged = locked.clone();
    forged["wheels"][0]["sha256"] = json!("0".repeat(64));
    std::fs::write(&other_lock, forged.to_string()).unwrap();
    let run = setup.llmtool_in(&sandbox, &["run", other, "--var", "text=x"]).await;
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    assert!(text(&run.stderr).contains("different wheels"), "{}", text(&run.stderr));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lock_whose_hashes_differ_refuses_the_wheels() {
    let setup = Setup::new(None);
    let code = "import markdown\ndef execute(variables):\n    return 'x'\n";
    // A version no other test fetches, so that its site folder is not there yet.
    let tool = setup.tool("md.json", &with_requirements(code, &["markdown==3.6"]));
    let lock = json!({
        "python": "3.12",
        "requirements": ["markdown==3.6"],
        "wheels": [{ "file": "Markdown-3.6-py3-none-any.whl", "sha256": "0".repeat(64) }]
    });
    std::fs::write(setup.data.path().join("md.lock.json"), lock.to_string()).unwrap();
    let run = setup.llmtool(&["run", tool.to_str().unwrap(), "--var", "text=x", "--yes"]).await;
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    assert!(text(&run.stderr).contains("not the ones"), "{}", text(&run.stderr));
}

#[tokio::test(flavor = "multi_thread")]
async fn requirements_with_native_code_or_an_address_are_refused_by_name() {
    let setup = Setup::new(None);
    let code = "def execute(variables):\n    return 'x'\n";
    let native = setup.tool("native.json", &with_requirements(code, &["numpy==2.1.0"]));
    let run = setup.llmtool(&["run", native.to_str().unwrap(), "--var", "text=x", "--yes"]).await;
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    let stderr = text(&run.stderr);
    assert!(stderr.contains("`numpy==2.1.0` has no pure-Python wheel"), "{stderr}");

    let url = setup.tool("url.json", &with_requirements(code, &["https://example.org/evil.whl"]));
    let run = setup.llmtool(&["run", url.to_str().unwrap(), "--var", "text=x", "--yes"]).await;
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    assert!(text(&run.stderr).contains("LT905"), "{}", text(&run.stderr));
}

#[tokio::test(flavor = "multi_thread")]
async fn llmtool_test_runs_a_smart_tools_cases_and_judges_their_answers() {
    let mock = Mock::start(vec![answer("Foxes jump."), answer("Dogs sleep.")]).await;
    let setup = Setup::new(Some(&mock));
    let tool = setup.tool("words.json", &smart(COUNT_AND_SUMMARISE, &["text"]));
    let tests = json!({ "cases": [
        { "name": "counts", "vars": { "text": "a quick fox" },
          "assert": [{ "type": "starts_with", "value": "3 words." }, { "type": "contains", "value": "Foxes" }] },
        { "name": "wrong on purpose", "vars": { "text": "one two" },
          "assert": [{ "type": "starts_with", "value": "5 words." }] }
    ]});
    std::fs::write(setup.data.path().join("words.tests.json"), tests.to_string()).unwrap();
    let run = setup
        .llmtool(&["test", tool.to_str().unwrap(), "--format", "json", "--no-cache", "-j", "1"])
        .await;
    assert_eq!(run.status.code(), Some(1), "one case fails: {}", text(&run.stderr));
    let report: Value = serde_json::from_slice(&run.stdout).unwrap();
    let cases = report[0]["cases"].as_array().unwrap();
    assert_eq!(cases[0]["pass"], true, "{report}");
    assert_eq!(cases[0]["runs"][0]["output"], "3 words. Foxes jump.");
    assert_eq!(cases[1]["pass"], false, "{report}");
    assert_eq!(cases[1]["runs"][0]["output"], "2 words. Dogs sleep.");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_runs_a_smart_tool_on_every_row_and_a_rerun_runs_none() {
    let setup = Setup::new(None);
    let code = "def execute(variables):\n    if variables['text'] == 'boom':\n        raise ValueError('no')\n    return str(len(variables['text'].split()))\n";
    let tool = setup.tool("count.json", &smart(code, &["text"]));
    let data = setup.data.path().join("rows.csv");
    std::fs::write(&data, "text\none two\nboom\na b c d\n").unwrap();
    let out = setup.data.path().join("out.jsonl");
    let args =
        ["batch", tool.to_str().unwrap(), data.to_str().unwrap(), "-o", out.to_str().unwrap()];
    let run = setup.llmtool(&args).await;
    let written = std::fs::read_to_string(&out).unwrap();
    let records: Vec<Value> = written.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(records.len(), 3, "{written} {}", text(&run.stderr));
    let by_row = |row: u64| records.iter().find(|r| r["row"] == row).unwrap();
    assert_eq!(by_row(1)["output"], "2");
    assert_eq!(by_row(1)["outcome"], "ok");
    assert_eq!(by_row(1)["provider"], "sandbox");
    assert_eq!(by_row(2)["outcome"], "failed");
    assert!(by_row(2)["error"].as_str().unwrap().contains("ValueError: no"), "{written}");
    assert_eq!(by_row(3)["output"], "4");

    let again = setup.llmtool(&args).await;
    assert_eq!(std::fs::read_to_string(&out).unwrap(), written, "{}", text(&again.stderr));
    assert!(text(&again.stderr).contains("0 row(s) run"), "{}", text(&again.stderr));
    assert!(text(&again.stderr).contains("3 already done"), "{}", text(&again.stderr));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_broken_or_linked_lock_is_never_replaced() {
    let setup = Setup::new(None);
    let code = "import markdown\ndef execute(variables):\n    return 'x'\n";
    let tool = setup.tool("md.json", &with_requirements(code, &["markdown==3.7"]));
    let lock = setup.data.path().join("md.lock.json");
    let args = ["run", tool.to_str().unwrap(), "--var", "text=x", "--yes"];

    // A lock left with a merge conflict is not silently made again from what is fetched.
    std::fs::write(&lock, "<<<<<<< HEAD\n{}\n").unwrap();
    let run = setup.llmtool(&args).await;
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    assert!(text(&run.stderr).contains("is not a lock"), "{}", text(&run.stderr));
    assert!(std::fs::read_to_string(&lock).unwrap().starts_with("<<<<<<<"));

    // A lock that is a symbolic link (say, to a dotfile) is never written through, even when
    // asked to write one.
    std::fs::remove_file(&lock).unwrap();
    let target = setup.data.path().join("elsewhere");
    std::os::unix::fs::symlink(&target, &lock).unwrap();
    let pull = ["sandbox", "pull", "--requirements", tool.to_str().unwrap()];
    let run = setup.llmtool(&pull).await;
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    assert!(text(&run.stderr).contains("symbolic link"), "{}", text(&run.stderr));
    assert!(!target.exists(), "nothing was written through the link");
}

#[tokio::test(flavor = "multi_thread")]
async fn render_says_a_smart_tool_has_no_prompt() {
    let setup = Setup::new(None);
    let tool = setup.tool("words.json", &smart(COUNT_AND_SUMMARISE, &["text"]));
    let render = setup.llmtool(&["render", tool.to_str().unwrap(), "--var", "text=x"]).await;
    assert_eq!(render.status.code(), Some(2));
    assert!(text(&render.stderr).contains("no prompt to render"), "{}", text(&render.stderr));
    assert!(render.stdout.is_empty());
}

const QUERIES_AND_FETCHES: &str = "def execute(variables):\n    said = [sql('SELECT count(*) AS orders FROM orders')]\n    for call in (lambda: sql('DELETE FROM orders'), lambda: fetch('http://169.254.169.254/latest/meta-data/')):\n        try:\n            said.append('done: ' + call())\n        except FunctionError as error:\n            said.append('refused: ' + str(error))\n    return '\\n'.join(said)\n";

/// A smart tool's code calls the functions its tool names, as a model would, under the same
/// rules: `sql()` reads the database the operator configured (a `DELETE` is refused by the
/// database itself, and raised in the code), `fetch()` of the cloud metadata address is
/// refused, and each call is kept with the smart run. A tool that names no functions gets
/// none.
#[tokio::test(flavor = "multi_thread")]
async fn smart_code_queries_its_database_read_only_and_fetches_only_what_is_allowed() {
    let setup = Setup::new(None);
    let shop = crate::support::sqlite_shop(setup.data.path());
    let mut config = std::fs::read_to_string(&setup.config).unwrap();
    config.push_str(&format!("[databases.shop]\nurl = \"sqlite:{}\"\n", shop.display()));
    std::fs::write(&setup.config, config).unwrap();
    let mut tool = smart(QUERIES_AND_FETCHES, &[]);
    tool["metadata"]["functions"] =
        json!([{"builtin": "query_database", "database": "shop"}, {"builtin": "fetch_url"}]);
    let file = setup.tool("shop.json", &tool);
    let run = setup.llmtool(&["run", file.to_str().unwrap()]).await;
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let said = text(&run.stdout);
    let lines: Vec<&str> = said.lines().collect();
    assert!(said.starts_with("orders\n6\n(1 row)\n"), "{said}");
    assert!(lines.iter().any(|l| l.starts_with("refused: ") && l.contains("readonly")), "{said}");
    assert!(
        lines.iter().any(|l| l.starts_with("refused: ") && l.contains("169.254.169.254")),
        "{said}"
    );
    assert_eq!(crate::support::orders_in(&shop), "6");

    let logs = setup.llmtool(&["logs", "--format", "json"]).await;
    let runs: Vec<Value> = serde_json::from_slice(&logs.stdout).unwrap();
    let calls = runs[0]["calls"].as_array().unwrap();
    let kept: Vec<(&str, bool)> =
        calls.iter().map(|c| (c["name"].as_str().unwrap(), c["failed"] == true)).collect();
    assert_eq!(kept, [("query_database", false), ("query_database", true), ("fetch_url", true)]);

    // Without `metadata.functions`, the code's calls are refused and nothing is reached.
    let bare = setup.tool("bare.json", &smart(QUERIES_AND_FETCHES, &[]));
    let run = setup.llmtool(&["run", bare.to_str().unwrap()]).await;
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    let said = text(&run.stderr);
    assert!(said.contains("FunctionError") && said.contains("offers no functions"), "{said}");
}
