//! `llmtool run` on an image tool, end to end: the binary against the mock's images API, the
//! pictures saved where asked (or in a new folder), never overwritten, private, measured,
//! costed, and logged as their paths and hashes.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Output, Stdio};

use base64::Engine as _;
use llmtool_testkit::pictures::png;
use llmtool_testkit::{Mock, Reply};
use sha2::Digest as _;

const TOOL: &str = r#"{
  "model_prompt": "A {{style}} picture of {{subject}}.",
  "metadata": {
    "prompt_name": "Picture",
    "model_version": ["gpt-image-1"],
    "parameters": { "quality": "low" },
    "variables": [
      { "name": "subject", "type": "text" },
      { "name": "style", "type": "single-select", "default": "watercolour", "allowed_values": ["watercolour", "photograph"] }
    ],
    "expected_output": { "type": "image", "format": "png", "size": "256x192" }
  }
}"#;

async fn llmtool(dir: &Path, args: &[&str]) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env("LLMTOOL_DATA_DIR", dir.join("data"))
        .env("MOCK_KEY", "sk-images-cli-3b8d")
        .env_remove("LLMTOOL_NO_LOG")
        .env_remove("OPENAI_API_KEY")
        .env_remove("LLMTOOL_MODEL")
        .env_remove("LLMTOOL_CONFIG")
        .output()
        .await
        .unwrap()
}

fn answer() -> Reply {
    let data = base64::engine::general_purpose::STANDARD.encode(png(256, 192));
    let body = serde_json::json!({
        "data": [{ "b64_json": data }],
        "usage": { "input_tokens": 12, "output_tokens": 272 }
    });
    Reply::json(200, body.to_string())
}

/// A folder with the tool and a config naming the mock as provider `mock`, with prices.
fn setup(mock: &Mock) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("picture.json"), TOOL).unwrap();
    let config = format!(
        "[providers.mock]\napi = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"MOCK_KEY\"\n[prices.\"mock/gpt-image-1\"]\ninput = 5.0\noutput = 40.0\n",
        mock.url
    );
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// An API that counts no tokens (DALL-E 3, many OpenAI-compatible servers) is charged by the
/// picture, at the config's `per_image`, with the markup.
#[tokio::test(flavor = "multi_thread")]
async fn a_model_priced_by_the_picture_is_charged_for_each_picture() {
    let data = base64::engine::general_purpose::STANDARD.encode(png(256, 192));
    let body = serde_json::json!({ "data": [{ "b64_json": data }, { "b64_json": data }] });
    let mock = Mock::start(vec![Reply::json(200, body.to_string())]).await;
    let dir = tempfile::tempdir().unwrap();
    let tool = TOOL.replace(r#""quality": "low""#, r#""quality": "low", "n": 2"#);
    std::fs::write(dir.path().join("picture.json"), tool).unwrap();
    let config = format!(
        "[providers.mock]\napi = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"MOCK_KEY\"\n[prices.\"mock/dall-e-3\"]\ninput = 0.0\noutput = 0.0\nper_image = 0.04\nmarkup_percent = 25\n",
        mock.url
    );
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    let args = [
        "run",
        "picture.json",
        "--var",
        "subject=a lighthouse",
        "--config",
        "config.toml",
        "--model",
        "mock/dall-e-3",
        "--out",
        "pictures",
        "--format",
        "json",
    ];
    let out = llmtool(dir.path(), &args).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["images"].as_array().unwrap().len(), 2);
    assert_eq!(mock.requests()[0].body["n"], 2);
    let cost = report["cost"].as_f64().unwrap();
    assert!((cost - 2.0 * 0.04 * 1.25).abs() < 1e-12, "{cost}");
    assert!((report["price"]["per_image"].as_f64().unwrap() - 0.05).abs() < 1e-12, "{report}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_image_tool_saves_a_png_of_the_asked_size_and_logs_its_cost() {
    let mock = Mock::start(vec![answer(), answer()]).await;
    let dir = setup(&mock);
    let run = ["run", "picture.json", "--var", "subject=a lighthouse", "--config", "config.toml"];
    let out = llmtool(
        dir.path(),
        &[&run[..], &["--model", "mock/gpt-image-1", "--out", "pictures", "--format", "json"]]
            .concat(),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let image = &report["images"][0];
    assert_eq!(image["path"], "pictures/image-1.png");
    assert_eq!((image["width"].clone(), image["height"].clone()), (256.into(), 192.into()));
    let saved = dir.path().join("pictures/image-1.png");
    let bytes = std::fs::read(&saved).unwrap();
    assert_eq!(image["bytes"], bytes.len());
    let decoder = png::Decoder::new(std::io::Cursor::new(&bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    assert_eq!((frame.width, frame.height), (256, 192));
    assert_eq!(std::fs::metadata(&saved).unwrap().permissions().mode() & 0o777, 0o600);
    let cost = report["cost"].as_f64().unwrap();
    assert!((cost - (12.0 * 5.0 + 272.0 * 40.0) / 1e6).abs() < 1e-12, "{cost}");
    let sent = mock.requests();
    assert_eq!(sent[0].path, "/v1/images/generations");
    assert_eq!(sent[0].body["prompt"], "A watercolour picture of a lighthouse.");
    assert_eq!(
        (sent[0].body["size"].clone(), sent[0].body["quality"].clone()),
        ("256x192".into(), "low".into())
    );

    // The same folder again: a new file beside the first, which is left as it was.
    let out = llmtool(
        dir.path(),
        &[&run[..], &["--model", "mock/gpt-image-1", "--out", "pictures"]].concat(),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "pictures/image-2.png");
    assert_eq!(std::fs::read(&saved).unwrap(), bytes);

    // The log keeps where the pictures are and their hash, never their bytes.
    let out = llmtool(dir.path(), &["logs", "--format", "json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let logged = text(&out.stdout);
    let sha = image["sha256"].as_str().unwrap();
    assert!(logged.contains(&format!("pictures/image-1.png sha256:{sha} 256x192 png")), "{logged}");
    // No piece of the picture: 63 bytes encode without padding, so they would show inside
    // the whole picture's base64.
    assert!(!logged.contains(&base64::engine::general_purpose::STANDARD.encode(&bytes[..63])));
}

#[tokio::test(flavor = "multi_thread")]
async fn without_out_the_pictures_go_to_a_new_folder() {
    let mock = Mock::start(vec![answer()]).await;
    let dir = setup(&mock);
    let out = llmtool(
        dir.path(),
        &[
            "run",
            "picture.json",
            "--var",
            "subject=a cat",
            "--config",
            "config.toml",
            "--model",
            "mock/gpt-image-1",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let path = text(&out.stdout).trim().to_owned();
    let folder = Path::new(&path).parent().unwrap();
    let name = folder.file_name().unwrap().to_str().unwrap();
    // `images-YYYYMMDD-HHMMSS`, in the current folder.
    let stamp = name.strip_prefix("images-").unwrap_or_default();
    assert!(
        stamp.len() == 15 && stamp.chars().filter(char::is_ascii_digit).count() == 14,
        "{path}"
    );
    assert!(path.starts_with("./") && path.ends_with("/image-1.png"), "{path}");
    let folder = dir.path().join(folder);
    assert_eq!(std::fs::metadata(folder).unwrap().permissions().mode() & 0o777, 0o700);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dry_run_shows_the_image_request_and_sends_nothing() {
    let mock = Mock::start(vec![]).await;
    let dir = setup(&mock);
    let out = llmtool(
        dir.path(),
        &[
            "run",
            "picture.json",
            "--var",
            "subject=a cat",
            "--config",
            "config.toml",
            "--model",
            "mock/gpt-image-1",
            "--dry-run",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.contains("/v1/images/generations"), "{shown}");
    assert!(
        shown.contains("\"size\": \"256x192\"") && shown.contains("Bearer [redacted]"),
        "{shown}"
    );
    assert!(!shown.contains("sk-images-cli-3b8d"));
    // The worst case counts the picture at its most tokens (a 1536x1024 picture at high
    // quality), at the config's price: the prompt's 31 bytes (at most one token each) at
    // $5/M, 6,240 output tokens at $40/M.
    let said = text(&out.stderr);
    assert!(said.contains("at most 6,240 output tokens"), "{said}");
    assert!(said.contains("worst case $0.249755"), "{said}");
    assert!(mock.requests().is_empty());
    assert!(
        !dir.path().read_dir().unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("images-"))
    );
}

/// `llmtool mcp` over standard input and output: the one message each of `requests` answers,
/// by id, once all are sent.
async fn mcp(dir: &Path, args: &[&str], requests: &[serde_json::Value]) -> Vec<serde_json::Value> {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_llmtool"))
        .arg("mcp")
        .args(args)
        .current_dir(dir)
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env("LLMTOOL_DATA_DIR", dir.join("data"))
        .env("MOCK_KEY", "sk-images-cli-3b8d")
        .env_remove("LLMTOOL_NO_LOG")
        .env_remove("LLMTOOL_MODEL")
        .env_remove("LLMTOOL_CONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "images-test", "version": "1"}}});
    let initialized = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    for message in [&initialize, &initialized].into_iter().chain(requests) {
        stdin.write_all(format!("{message}\n").as_bytes()).await.unwrap();
    }
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut answers = vec![serde_json::Value::Null; requests.len()];
    while answers.iter().any(serde_json::Value::is_null) {
        let line = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
            .await
            .expect("the server answers within 30 s")
            .unwrap()
            .expect("the server answers before it ends");
        let message: serde_json::Value = serde_json::from_str(&line).unwrap();
        let at = requests.iter().position(|r| r["id"] == message["id"]);
        if let Some(at) = at {
            answers[at] = message;
        }
    }
    answers
}

#[tokio::test(flavor = "multi_thread")]
async fn over_mcp_the_pictures_come_back_as_image_content_and_nothing_is_written() {
    let mock = Mock::start(vec![answer()]).await;
    let dir = setup(&mock);
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "picture", "arguments": {"subject": "a lighthouse"}}});
    let args = ["picture.json", "--config", "config.toml", "--model", "mock/gpt-image-1"];
    let answers = mcp(dir.path(), &args, &[call]).await;
    let result = &answers[0]["result"];
    assert_eq!(result["isError"], false, "{result}");
    let content = result["content"].as_array().unwrap();
    assert_eq!(content.len(), 1, "{result}");
    assert_eq!(
        (content[0]["type"].as_str(), content[0]["mimeType"].as_str()),
        (Some("image"), Some("image/png"))
    );
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(content[0]["data"].as_str().unwrap())
        .unwrap();
    assert_eq!(bytes, png(256, 192));
    assert_eq!(mock.requests()[0].body["prompt"], "A watercolour picture of a lighthouse.");
    // Nothing is saved on the server's side: no picture folder appears where it runs.
    let names: Vec<String> = dir
        .path()
        .read_dir()
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.starts_with("images-")), "{names:?}");

    // The log keeps the picture's size, format and hash, never its bytes.
    let out = llmtool(dir.path(), &["logs", "--format", "json"]).await;
    let logged = text(&out.stdout);
    let sha = hex::encode(sha2::Sha256::digest(&bytes));
    assert!(logged.contains(&format!("sha256:{sha} 256x192 png")), "{logged}");
    assert!(!logged.contains(&base64::engine::general_purpose::STANDARD.encode(&bytes[..63])));
}

#[tokio::test(flavor = "multi_thread")]
async fn llmtool_test_asserts_on_the_pictures_size_and_format() {
    let mock = Mock::start(vec![answer(), answer()]).await;
    let dir = setup(&mock);
    let tests = serde_json::json!({"cases": [
        {"name": "the asked size", "vars": {"subject": "a lighthouse"},
         "assert": [{"type": "image_size", "value": "256x192"}, {"type": "image_format", "value": "png"}]},
        {"name": "a square", "vars": {"subject": "a cat"},
         "assert": [{"type": "image_size", "value": "512x512"}]}
    ]});
    std::fs::write(dir.path().join("picture.tests.json"), tests.to_string()).unwrap();
    let out = llmtool(
        dir.path(),
        &[
            "test",
            "picture.json",
            "--config",
            "config.toml",
            "--model",
            "mock/gpt-image-1",
            "--format",
            "json",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cases = report[0]["cases"].as_array().unwrap();
    assert_eq!(cases[0]["pass"], true, "{}", cases[0]);
    assert_eq!(cases[1]["pass"], false, "{}", cases[1]);
    let reason = &cases[1]["runs"][0]["assertions"][0]["reason"];
    assert_eq!(reason, "a picture is 256x192, not 512x512", "{}", cases[1]);
    // The pictures were measured and let go: nothing was written where the test ran.
    let names: Vec<String> = dir
        .path()
        .read_dir()
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.starts_with("images-")), "{names:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_saves_each_rows_pictures_and_writes_their_paths() {
    let mock = Mock::start(vec![answer(), answer()]).await;
    let dir = setup(&mock);
    std::fs::write(dir.path().join("subjects.csv"), "subject\na lighthouse\na cat\n").unwrap();
    let args = ["batch", "picture.json", "subjects.csv", "-o", "out.jsonl", "-j", "1"];
    let model = ["--config", "config.toml", "--model", "mock/gpt-image-1"];
    let out = llmtool(dir.path(), &[&args[..], &model[..]].concat()).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let records: Vec<serde_json::Value> = std::fs::read_to_string(dir.path().join("out.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(records.len(), 2);
    for record in &records {
        assert_eq!(record["outcome"], "ok", "{record}");
        let path = record["output"].as_str().unwrap();
        // One file for each row, in the folder beside the output, named after the row.
        let expected = format!("out-pictures/row-{}-1.png", record["row"]);
        assert_eq!(path, expected);
        let saved = dir.path().join(path);
        assert_eq!(std::fs::read(&saved).unwrap(), png(256, 192));
        assert_eq!(std::fs::metadata(&saved).unwrap().permissions().mode() & 0o777, 0o600);
        assert!(record["cost_usd"].as_f64().unwrap() > 0.0, "{record}");
    }
    assert_eq!(mock.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn pictures_that_cannot_be_saved_fail_the_run_and_keep_its_cost() {
    let mock = Mock::start(vec![answer()]).await;
    let dir = setup(&mock);
    // `--out` names a file: no folder can be made there.
    let run = ["run", "picture.json", "--var", "subject=a cat", "--config", "config.toml"];
    let out = llmtool(
        dir.path(),
        &[&run[..], &["--model", "mock/gpt-image-1", "--out", "config.toml"]].concat(),
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("cannot save the pictures"), "{}", text(&out.stderr));
    let out = llmtool(dir.path(), &["logs", "--format", "json"]).await;
    let logged: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let record = &logged.as_array().unwrap()[0];
    assert_eq!(record["outcome"], "failed", "{record}");
    let cost = record["cost_usd"].as_f64().unwrap();
    assert!((cost - (12.0 * 5.0 + 272.0 * 40.0) / 1e6).abs() < 1e-12, "{record}");
    assert_eq!(record["output_tokens"], 272, "{record}");
}

/// `llmtool ARGS` in a terminal (a pseudo-terminal) that says it is kitty, or with `TERM`
/// `term` when given: what it printed.
fn in_terminal(dir: &Path, term: Option<&str>, args: &[&str]) -> String {
    use expectrl::Expect as _;
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_llmtool"));
    command
        .args(args)
        .current_dir(dir)
        .env("TERM", term.unwrap_or("xterm-kitty"))
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env("LLMTOOL_DATA_DIR", dir.join("data"))
        .env("MOCK_KEY", "sk-images-cli-3b8d")
        .env_remove("LLMTOOL_PREVIEW")
        .env_remove("KITTY_WINDOW_ID")
        .env_remove("KONSOLE_VERSION")
        .env_remove("TERM_PROGRAM")
        .env_remove("LLMTOOL_MODEL")
        .env_remove("LLMTOOL_CONFIG");
    let mut session = expectrl::Session::spawn(command).unwrap();
    session.set_expect_timeout(Some(std::time::Duration::from_secs(30)));
    let ended = session.expect(expectrl::Eof).unwrap();
    String::from_utf8_lossy(&[ended.before(), ended.as_bytes()].concat()).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn in_a_kitty_terminal_the_picture_is_drawn_under_its_path() {
    let mock = Mock::start(vec![answer(), answer()]).await;
    let dir = setup(&mock);
    let path = dir.path().to_owned();
    let run = ["run", "picture.json", "--var", "subject=a cat", "--config", "config.toml"];
    let args: Vec<&str> =
        [&run[..], &["--model", "mock/gpt-image-1", "--out", "pictures"]].concat();
    let shown = {
        let (path, args) = (path.clone(), args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>());
        tokio::task::spawn_blocking(move || {
            in_terminal(&path, None, &args.iter().map(String::as_str).collect::<Vec<_>>())
        })
        .await
        .unwrap()
    };
    assert!(shown.contains("pictures/image-1.png"), "{shown:?}");
    let Some((_, drawn)) = shown.split_once("\x1b_Ga=T,f=100,c=40,") else {
        panic!("no picture drawn: {shown:?}")
    };
    // The escape holds the saved file's bytes.
    let data: String = drawn
        .split("\x1b\\")
        .filter_map(|piece| piece.split_once(';').map(|(_, data)| data.to_owned()))
        .collect();
    let saved = std::fs::read(path.join("pictures/image-1.png")).unwrap();
    assert_eq!(base64::engine::general_purpose::STANDARD.decode(data.trim()).unwrap(), saved);

    let mut quiet = args.clone();
    quiet.push("--no-preview");
    let quiet: Vec<String> = quiet.iter().map(|a| (*a).to_owned()).collect();
    let shown = tokio::task::spawn_blocking(move || {
        in_terminal(&path, None, &quiet.iter().map(String::as_str).collect::<Vec<_>>())
    })
    .await
    .unwrap();
    assert!(shown.contains("pictures/image-2.png") && !shown.contains("\x1b_G"), "{shown:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn in_a_sixel_terminal_the_picture_is_drawn_in_sixels() {
    let mock = Mock::start(vec![answer()]).await;
    let dir = setup(&mock);
    let path = dir.path().to_owned();
    let shown = tokio::task::spawn_blocking(move || {
        let run = ["run", "picture.json", "--var", "subject=a cat", "--config", "config.toml"];
        let args = [&run[..], &["--model", "mock/gpt-image-1", "--out", "pictures"]].concat();
        in_terminal(&path, Some("foot"), &args)
    })
    .await
    .unwrap();
    assert!(shown.contains("pictures/image-1.png"), "{shown:?}");
    let Some((_, drawn)) = shown.split_once("\x1bP") else { panic!("no sixels: {shown:?}") };
    let end = drawn.find("\x1b\\").unwrap_or_else(|| panic!("unterminated: {shown:?}"));
    let sixels = format!("\x1bP{}\x1b\\", &drawn[..end]);
    let image = icy_sixel::SixelImage::decode(sixels.as_bytes()).unwrap();
    assert_eq!((image.width, image.height), (256, 192));
}
