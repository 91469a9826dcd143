//! What llmtool promises in `docs/security.md`, checked on the binary: a tool file cannot make
//! it open a path, a server never downloads because a client asked, a chosen provider runs a
//! model it can serve, and every API is listed.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(name)
}

/// The binary with no provider configured, models kept in `models`.
fn command(models: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_llmtool"));
    clean_environment(&mut command, models);
    command
}

/// No provider configured, models kept in `models`.
fn clean_environment(command: &mut Command, models: &Path) {
    command
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env("LLMTOOL_NO_LOG", "1")
        .env("LLMTOOL_MODELS_DIR", models)
        .stdin(Stdio::null());
    for variable in ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "LLMTOOL_MODEL"] {
        command.env_remove(variable);
    }
}

fn run(models: &Path, args: &[&str]) -> Output {
    command(models).args(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A tool whose model list names `model`.
fn tool_naming(dir: &Path, model: &str) -> PathBuf {
    let path = dir.join("tool.json");
    let tool = serde_json::json!({
        "model_prompt": "Say hi to {{who}}.",
        "metadata": {
            "prompt_name": "Greeter",
            "model_version": [model],
            "variables": [{"name": "who", "type": "text", "default": "you"}]
        }
    });
    std::fs::write(&path, tool.to_string()).unwrap();
    path
}

#[test]
fn a_tool_file_cannot_make_llmtool_open_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.gguf");
    std::fs::write(&secret, "api_key = \"do-not-show-me\"\n").unwrap();
    let tool = tool_naming(dir.path(), &format!("local:{}", secret.display()));
    let tool = tool.to_str().unwrap();
    let out = run(dir.path(), &["run", tool]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--allow-local-paths"), "{stderr}");
    // Allowed, the file is opened and refused as what it is, without showing its bytes.
    let out = run(dir.path(), &["run", tool, "--allow-local-paths"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not a GGUF file") && !stderr.contains("do-not-show-me"), "{stderr}");
    // A device is not read, even when allowed.
    let tool = tool_naming(dir.path(), "local:/dev/zero");
    let out = run(dir.path(), &["run", tool.to_str().unwrap(), "--allow-local-paths"]);
    assert!(text(&out.stderr).contains("not a `.gguf` file"), "{}", text(&out.stderr));
    // The user may name a file on the command line without the flag.
    let out = run(
        dir.path(),
        &["run", tool.to_str().unwrap(), "--model", &format!("local:{}", secret.display())],
    );
    assert!(text(&out.stderr).contains("not a GGUF file"), "{}", text(&out.stderr));
}

#[test]
fn a_chosen_provider_runs_a_model_it_can_serve() {
    let dir = tempfile::tempdir().unwrap();
    let tool = example("teach-me-anything.json");
    let out = run(
        dir.path(),
        &[
            "run",
            tool.to_str().unwrap(),
            "--var",
            "topic=tides",
            "--provider",
            "local",
            "--dry-run",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (shown["provider"].as_str(), shown["model"].as_str()),
        (Some("local"), Some("smollm2"))
    );
    assert!(
        stderr.contains("note: local model cannot serve `gpt-4o-mini`; running its default model `smollm2` instead"),
        "{stderr}"
    );
}

#[test]
fn providers_lists_every_api() {
    let dir = tempfile::tempdir().unwrap();
    let out = command(dir.path())
        .args(["providers", "--format", "json"])
        .env_remove("GOOGLE_CLOUD_PROJECT")
        .output()
        .unwrap();
    let statuses: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let apis: Vec<&str> =
        statuses.as_array().unwrap().iter().map(|s| s["api"].as_str().unwrap()).collect();
    for api in ["openai", "anthropic", "gemini", "vertex", "local"] {
        assert!(apis.contains(&api), "{api} is not listed: {apis:?}");
    }
}

/// Sends JSON-RPC lines to `llmtool mcp` over stdio and returns the answer to request `id`.
fn ask(
    stdin: &mut std::process::ChildStdin,
    lines: &mut impl Iterator<Item = String>,
    message: &serde_json::Value,
) -> serde_json::Value {
    writeln!(stdin, "{message}").unwrap();
    stdin.flush().unwrap();
    let id = &message["id"];
    lines
        .map(|line| serde_json::from_str::<serde_json::Value>(&line).unwrap())
        .find(|answer| &answer["id"] == id)
        .unwrap()
}

/// Opens the MCP session: `initialize`, then `notifications/initialized`.
fn initialize(stdin: &mut std::process::ChildStdin, lines: &mut impl Iterator<Item = String>) {
    let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}});
    ask(stdin, lines, &initialize);
    let initialized = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    writeln!(stdin, "{initialized}").unwrap();
}

#[test]
fn an_mcp_server_never_downloads_because_a_client_asked() {
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    let tools = dir.path().join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    tool_naming(&tools, "local");
    let mut child = command(&models)
        .args(["mcp", "--log-level", "error"])
        .arg(&tools)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines().map(Result::unwrap);
    initialize(&mut stdin, &mut lines);
    let listed = ask(
        &mut stdin,
        &mut lines,
        &serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    );
    let name = listed["result"]["tools"][0]["name"].as_str().unwrap().to_owned();
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": name, "arguments": {"who": "Ada"}}});
    let answer = ask(&mut stdin, &mut lines, &call);
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let message = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        message.contains("not installed") && message.contains("llmtool model pull"),
        "{message}"
    );
    let fetched = std::fs::read_dir(&models).map_or(0, Iterator::count);
    assert_eq!(fetched, 0, "nothing was written to the models folder");
}

#[test]
fn the_download_question_defaults_to_no() {
    let dir = tempfile::tempdir().unwrap();
    let tool = example("teach-me-anything.json");
    // `script` (util-linux) gives the binary a terminal, so that it asks; Enter alone answers.
    let line = format!(
        "{} run {} --var topic=x --model local",
        env!("CARGO_BIN_EXE_llmtool"),
        tool.display()
    );
    let mut shell = Command::new("sh");
    clean_environment(&mut shell, dir.path());
    let mut child = shell
        .args(["-c", "exec script -qec \"$0\" /dev/null", &line])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let shown = text(&out.stdout) + &text(&out.stderr);
    assert!(shown.contains("[y/N]") && shown.contains("not downloaded"), "{shown}");
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing was fetched");
}

#[test]
fn a_non_loopback_http_address_needs_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &["mcp", "--http", "0.0.0.0:0", dir.path().to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no token is set") && stderr.contains("--token-file"), "{stderr}");
    let empty = dir.path().join("token");
    std::fs::write(&empty, "\n").unwrap();
    let out = run(
        dir.path(),
        &[
            "mcp",
            "--http",
            "0.0.0.0:0",
            "--token-file",
            empty.to_str().unwrap(),
            dir.path().to_str().unwrap(),
        ],
    );
    assert!(text(&out.stderr).contains("is empty"), "{}", text(&out.stderr));
}

/// The peak resident memory of process `pid`, in bytes.
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

#[test]
fn twenty_thousand_initialize_requests_keep_the_server_small() {
    let dir = tempfile::tempdir().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let mut child = command(dir.path())
        .args(["mcp", "--log-level", "error", "--http", &address.to_string()])
        .arg(example(""))
        .spawn()
        .unwrap();
    let url = format!("http://{address}/mcp");
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let (answered, refused) = runtime.block_on(async {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::new();
        for _ in 0..100 {
            if http.get(&url).send().await.is_ok() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let body =
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "flood", "version": "1"}}})
            .to_string();
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let (http, url, body) = (http.clone(), url.clone(), body.clone());
            tasks.push(tokio::spawn(async move {
                let (mut answered, mut refused) = (0, 0);
                for _ in 0..2_500 {
                    let response = http
                        .post(&url)
                        .header("accept", "application/json, text/event-stream")
                        .header("content-type", "application/json")
                        .body(body.clone())
                        .send()
                        .await
                        .unwrap();
                    if response.status() == 200 {
                        answered += 1;
                    } else {
                        refused += 1;
                    }
                    let _ = response.bytes().await;
                }
                (answered, refused)
            }));
        }
        let mut totals = (0, 0);
        for task in tasks {
            let (answered, refused) = task.await.unwrap();
            totals = (totals.0 + answered, totals.1 + refused);
        }
        totals
    });
    let peak = peak_rss(child.id());
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!((answered, refused), (20_000, 0), "every initialize is answered");
    assert!(peak < 200 << 20, "peak RSS {} MB", peak >> 20);
}

#[test]
fn an_mcp_tool_error_and_the_logs_never_show_a_key() {
    const KEY: &str = "sk-mcp-test-93b1c0ffee";
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let echo = format!(r#"{{"error":{{"message":"the key {KEY} is not valid"}}}}"#);
    let mock = runtime
        .block_on(llmtool_testkit::Mock::start(vec![llmtool_testkit::Reply::json(401, echo)]));
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    let settings = format!(
        "default_model = \"mock/m\"\n[providers.mock]\napi = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"MOCK_KEY\"\n",
        mock.url
    );
    std::fs::write(&config, settings).unwrap();
    let tools = dir.path().join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    tool_naming(&tools, "mock/m");
    let mut child = command(dir.path())
        .args(["mcp", "--log-level", "trace", "--config"])
        .arg(&config)
        .arg(&tools)
        .env("MOCK_KEY", KEY)
        // The run log on, in this test's folder.
        .env("LLMTOOL_NO_LOG", "")
        .env("LLMTOOL_DATA_DIR", dir.path().join("data"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines().map(Result::unwrap);
    initialize(&mut stdin, &mut lines);
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "greeter", "arguments": {}}});
    let answer = ask(&mut stdin, &mut lines, &call);
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let logs = text(&out.stderr);
    let message = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(message.contains("the key [redacted] is not valid"), "{answer}");
    assert!(!logs.contains(KEY), "the logs show the key");
    assert!(logs.contains("[redacted]"), "the trace logs carry the answer: {logs}");
    // The call is in the run log, as a run by the MCP server that failed, with no key.
    let listed = command(dir.path())
        .args(["logs", "--format", "json"])
        .env("LLMTOOL_DATA_DIR", dir.path().join("data"))
        .output()
        .unwrap();
    let runs: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 1, "{runs}");
    assert_eq!(
        (runs[0]["origin"].as_str(), runs[0]["outcome"].as_str()),
        (Some("mcp"), Some("failed"))
    );
    assert_eq!(runs[0]["tool_name"], "Greeter");
    assert!(runs[0]["error"].as_str().unwrap().contains("[redacted]"), "{runs}");
    assert!(!runs.to_string().contains(KEY), "the run log shows the key");
}

#[test]
fn a_file_past_the_size_limit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.json");
    let tool = serde_json::json!({"model_prompt": "x".repeat(5000)});
    std::fs::write(&big, tool.to_string()).unwrap();
    let limited = |args: &[&str], stdin: Option<&[u8]>| {
        let mut child = command(dir.path())
            .args(args)
            .env("LLMTOOL_MAX_FILE_BYTES", "4K")
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut pipe = child.stdin.take().unwrap();
        let _ = pipe.write_all(stdin.unwrap_or_default());
        drop(pipe);
        child.wait_with_output().unwrap()
    };
    let path = big.to_str().unwrap();
    for args in [&["check", path][..], &["render", path], &["fmt", path], &["import", path]] {
        let out = limited(args, None);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("larger than 4096 bytes") && stderr.contains("LLMTOOL_MAX_FILE_BYTES"),
            "{stderr}"
        );
    }
    let out = limited(&["check", "-"], Some(tool.to_string().as_bytes()));
    assert!(text(&out.stderr).contains("larger than 4096 bytes"), "{}", text(&out.stderr));
    let out = limited(&["check", "/dev/zero"], None);
    assert_eq!(out.status.code(), Some(2), "an endless device is refused, not read forever");
}

#[test]
fn checking_a_large_tool_takes_under_three_times_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("large.json");
    let prompt = "Summarise {{text}} in the tone of {{tone}}. ".repeat(900_000);
    let tool = serde_json::json!({"model_prompt": prompt, "metadata": {"prompt_name": "Large",
        "avatar": format!("data:image/png;base64,{}", "A".repeat(1_000_000)),
        "variables": [{"name": "text", "type": "text", "description": "the text"},
                      {"name": "tone", "type": "single-select", "description": "tone", "default": "dry", "allowed_values": ["dry", "warm"]}]}});
    std::fs::write(&path, tool.to_string()).unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    // What the process takes whatever the file (its code and libraries, mapped and touched) is
    // not the file's: the same check of a small tool measures it.
    let small = dir.path().join("small.json");
    std::fs::write(&small, r#"{"model_prompt": "Hello", "metadata": {"prompt_name": "Small"}}"#)
        .unwrap();
    // A small check may end before it is sampled: it is tried until it is.
    let fixed =
        (0..20).map(|_| peak_memory(dir.path(), &small)).find(|peak| *peak > 0).unwrap_or(0);
    let peak = peak_memory(dir.path(), &path);
    assert!(size > 40_000_000);
    assert!(fixed > 0 && peak > 0, "llmtool's memory was never read");
    let taken = peak.saturating_sub(fixed);
    assert!(taken < 3 * size, "{} MB for a {} MB file", taken >> 20, size >> 20);
}

/// The most memory `llmtool check FILE` held at once.
fn peak_memory(dir: &Path, file: &Path) -> u64 {
    let mut child = command(dir)
        .args(["check", file.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Sample the peak while it runs, since the process is gone once it exits.
    let pid = child.id();
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() {
        // Only once the child is llmtool: between fork and exec it is a copy of this test,
        // whose memory (the large file it wrote) is not llmtool's.
        if let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status"))
            && status.lines().next().is_some_and(|name| name.trim_end().ends_with("llmtool"))
            && let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:"))
        {
            peak = peak.max(line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024);
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    peak
}

/// Whether this process runs as root (who may become `nobody` to read as another user would).
#[cfg(unix)]
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

#[test]
#[cfg(unix)]
fn run_data_is_readable_by_its_owner_only() {
    use std::os::unix::fs::PermissionsExt as _;
    if !is_root() {
        eprintln!("skipped: reading as another user takes root, to become `nobody`");
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let answer = r#"{"choices":[{"message":{"content":"Hi there."},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}"#;
    let mock = runtime.block_on(llmtool_testkit::Mock::repeating(
        "127.0.0.1:0",
        llmtool_testkit::Reply::json(200, answer),
    ));
    let dir = tempfile::tempdir().unwrap();
    // The test's folder is open to all, so that only llmtool's own modes keep others out.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = dir.path().join("config.toml");
    let settings = format!(
        "default_model = \"mock/m\"\n[providers.mock]\napi = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"MOCK_KEY\"\n",
        mock.url
    );
    std::fs::write(&config, settings).unwrap();
    let tool = tool_naming(dir.path(), "mock/m");
    std::fs::write(dir.path().join("rows.csv"), "who\nAna\nBo\n").unwrap();
    std::fs::write(
        dir.path().join("tool.tests.json"),
        r#"{"cases": [{"name": "greets", "vars": {"who": "Ana"}, "assert": [{"type": "contains", "value": "Hi"}]}]}"#,
    )
    .unwrap();
    let data = dir.path().join("data");
    // Under the loosest umask, as another user's shell might have it.
    let llmtool = |args: &[&str]| {
        let mut command = Command::new("sh");
        command.args(["-c", "umask 000 && exec \"$@\"", "sh", env!("CARGO_BIN_EXE_llmtool")]);
        clean_environment(&mut command, dir.path());
        command
            .args(args)
            .current_dir(dir.path())
            .env("LLMTOOL_NO_LOG", "")
            .env("LLMTOOL_DATA_DIR", &data)
            .env("MOCK_KEY", "mock-key-0123456789")
            .output()
            .unwrap()
    };
    let config = config.to_str().unwrap();
    let tool = tool.to_str().unwrap();
    for args in [
        vec!["run", tool, "--config", config, "--no-stream"],
        vec!["batch", tool, "rows.csv", "-o", "out.jsonl", "--config", config],
        vec!["test", tool, "--config", config],
        vec!["token", "create", "ci"],
    ] {
        let done = llmtool(&args);
        assert_eq!(done.status.code(), Some(0), "{args:?}: {}", text(&done.stderr));
        assert!(!text(&done.stderr).contains("warning:"), "{args:?}: {}", text(&done.stderr));
    }
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let private_files = [
        data.join("runs.db"),
        data.join("library.db"),
        dir.path().join("out.jsonl"),
        dir.path().join("out.jsonl.journal"),
    ];
    assert_eq!(mode(&data), 0o700);
    for file in &private_files {
        assert_eq!(mode(file), 0o600, "{}", file.display());
    }
    let cached: Vec<PathBuf> = walk(&data.join("test-cache"));
    assert!(!cached.is_empty(), "the test's answer is cached");
    for path in &cached {
        let expected = if path.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(mode(path), expected, "{}", path.display());
    }
    // Read as `nobody`: every file is refused.
    let as_nobody = |path: &Path| {
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "cat"])
            .arg(path)
            .output()
            .unwrap()
    };
    for file in private_files.iter().chain(cached.iter().filter(|p| p.is_file())) {
        let read = as_nobody(file);
        assert!(!read.status.success(), "nobody read {}", file.display());
        assert!(text(&read.stderr).contains("Permission denied"), "{}", text(&read.stderr));
    }
    // Data an earlier llmtool left open is narrowed when next used, and said so.
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(data.join("runs.db"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let done = llmtool(&["logs", "-n", "1"]);
    let said = text(&done.stderr);
    assert!(said.contains("warning:") && said.contains("readable by you only"), "{said}");
    assert_eq!((mode(&data), mode(&data.join("runs.db"))), (0o700, 0o600));
}

/// Every file and folder under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        }
        found.push(path);
    }
    found
}
