//! The server driven in-process over `tokio::io::duplex`, as raw JSON-RPC lines: every method
//! and error path, in the `initialize` protocol (2025-11-25) and the stateless one
//! (2026-07-28). (`scripts/mcp_clients.py` drives the real binary with the official Python
//! SDK and MCP Inspector.)

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use llmtool_convert::{FunctionFormat, FunctionTool};
use llmtool_format::template::Inputs;
use llmtool_mcp::{AnswerFuture, Library, LibraryOptions, Only, Runner, Server, transport};
use llmtool_runtime::RunError;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// A runner that answers from a script (an error: the provider cannot be reached) and
/// remembers the prompts it was given. Only the strategy consultant runs on a remote model.
struct ScriptedRunner {
    answer: Result<String, String>,
    prompts: Mutex<Vec<String>>,
}

impl Runner for ScriptedRunner {
    fn is_remote(&self, tool: &llmtool_format::model::Tool) -> bool {
        tool.name() == Some("Strategy Consultant")
    }

    fn answer(
        &self,
        _tool: llmtool_format::model::Tool,
        prompt: String,
        _subject: llmtool_runtime::Subject,
    ) -> AnswerFuture {
        self.prompts.lock().unwrap().push(prompt);
        let answer = self.answer.clone().map(Into::into).map_err(|reason| {
            RunError::Provider(llmtool_providers::ProviderError::Connection(reason))
        });
        Box::pin(async move { answer })
    }
}

fn runner(answer: Result<&str, &str>) -> Arc<ScriptedRunner> {
    Arc::new(ScriptedRunner {
        answer: answer.map(str::to_owned).map_err(str::to_owned),
        prompts: Mutex::new(Vec::new()),
    })
}

fn library(prefix: &str) -> Library {
    let options = LibraryOptions { name_prefix: prefix.into(), ..LibraryOptions::default() };
    let (library, problems) = Library::load(&[examples()], &options, None);
    assert!(problems.is_empty(), "{problems:?}");
    library
}

/// A JSON-RPC client on one end of a duplex pipe, the server on the other.
struct Wire {
    writer: WriteHalf<DuplexStream>,
    reader: BufReader<ReadHalf<DuplexStream>>,
    next_id: u64,
    /// Notifications that arrived while waiting for a response.
    notifications: Vec<Value>,
}

const MODERN: &str = "2026-07-28";

impl Wire {
    fn start(server: Server) -> Wire {
        let (client, server_end) = tokio::io::duplex(1 << 20);
        let (read, write) = tokio::io::split(server_end);
        tokio::spawn(transport::serve_io(server, read, write));
        let (reader, writer) = tokio::io::split(client);
        Wire { writer, reader: BufReader::new(reader), next_id: 1, notifications: Vec::new() }
    }

    /// A session of the `initialize` protocol.
    async fn initialized(server: Server) -> (Wire, Value) {
        let mut wire = Wire::start(server);
        let result = wire
            .request(
                "initialize",
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": { "name": "duplex-test", "version": "1" },
                }),
            )
            .await;
        wire.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await;
        (wire, result)
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.writer.write_all(line.as_bytes()).await.unwrap();
    }

    async fn read(&mut self) -> Value {
        let mut line = String::new();
        let read = tokio::time::timeout(Duration::from_secs(10), self.reader.read_line(&mut line));
        read.await.expect("the server answers within 10 s").unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    /// The whole response to a request (`result` or `error`).
    async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).await;
        loop {
            let message = self.read().await;
            if message["id"] == json!(id) {
                return message;
            }
            self.notifications.push(message);
        }
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        let response = self.call(method, params).await;
        assert!(response.get("error").is_none(), "{method}: {response}");
        response["result"].clone()
    }

    /// A request of the stateless protocol: the version and capabilities ride in `_meta`.
    async fn modern(&mut self, method: &str, mut params: Value) -> Value {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        self.call(method, params).await
    }

    /// The next notification with `method`, waiting for it if needed.
    async fn notification(&mut self, method: &str) -> Value {
        if let Some(at) = self.notifications.iter().position(|n| n["method"] == method) {
            return self.notifications.remove(at);
        }
        loop {
            let message = self.read().await;
            if message["method"] == method {
                return message;
            }
            self.notifications.push(message);
        }
    }
}

fn rendered(path: &str, values: &[(&str, Value)]) -> String {
    let text = std::fs::read_to_string(examples().join(path)).unwrap();
    let document = llmtool_format::Document::from_text(text);
    let template = llmtool_format::template::ToolTemplate::new(document.tool.as_ref().unwrap());
    let object: serde_json::Map<String, Value> =
        values.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
    let inputs = Inputs::from_json(&Value::Object(object), template.variables()).unwrap();
    template.render(&inputs).unwrap()
}

#[tokio::test]
async fn initialize_announces_what_is_served() {
    let server = Server::new(library(""), runner(Ok("go")), Only::Both);
    let (_wire, result) = Wire::initialized(server).await;
    assert_eq!(result["protocolVersion"], "2025-11-25");
    let capabilities = &result["capabilities"];
    assert_eq!(capabilities["prompts"]["listChanged"], true);
    assert_eq!(capabilities["tools"]["listChanged"], true);
    assert!(capabilities["completions"].is_object(), "{capabilities}");
    assert_eq!(result["serverInfo"]["name"], "llmtool");
    let only = Server::new(library(""), runner(Ok("go")), Only::Prompts);
    let (mut wire, result) = Wire::initialized(only).await;
    assert!(result["capabilities"].get("tools").is_none(), "{result}");
    let tools = wire.request("tools/list", json!({})).await;
    assert_eq!(tools["tools"], json!([]));
    let refused = wire.call("tools/call", json!({ "name": "strategy_consultant" })).await;
    assert_eq!(refused["error"]["code"], -32602);
}

#[tokio::test]
async fn prompts_are_listed_with_their_arguments_titles_and_icons() {
    let server = Server::new(library("team_"), runner(Ok("go")), Only::Both);
    let (mut wire, _) = Wire::initialized(server).await;
    let listed = wire.request("prompts/list", json!({})).await;
    let prompts = listed["prompts"].as_array().unwrap();
    assert_eq!(prompts.len(), 11);
    let names: Vec<&str> = prompts.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert!(names.iter().all(|n| n.starts_with("team_")), "{names:?}");
    let image = prompts.iter().find(|p| p["name"] == "team_image_generator").unwrap();
    assert_eq!(image["title"], "Image Generator");
    assert_eq!(image["icons"][0]["src"], "https://llmtool.dev/avatars/image-generator.png");
    let image = prompts.iter().find(|p| p["name"] == "team_image_prompt_writer").unwrap();
    assert_eq!(image["title"], "Image Prompt Writer");
    let arguments = image["arguments"].as_array().unwrap();
    assert_eq!(
        arguments[0],
        json!({
            "name": "subject",
            "description": "What the image shows, e.g. 'a lighthouse in a storm'. Text.",
            "required": true,
        })
    );
    assert_eq!(arguments[2]["name"], "aspect ratio");
    assert_eq!(arguments[2]["required"], false);
    assert!(arguments[2]["description"].as_str().unwrap().contains("One of: 1:1, 16:9, 9:16, 4:3"));
}

#[tokio::test]
async fn prompts_get_renders_as_llmtool_render_does() {
    let server = Server::new(library(""), runner(Ok("go")), Only::Both);
    let (mut wire, _) = Wire::initialized(server).await;
    let situation = "A bakery {{topic}} wants $5 \"more\".";
    for (frameworks, items) in [
        (json!("PESTLE, SWOT"), vec!["PESTLE", "SWOT"]),
        (json!("[\"BCG matrix\"]"), vec!["BCG matrix"]),
        (json!(["Ansoff matrix", "SWOT"]), vec!["Ansoff matrix", "SWOT"]),
    ] {
        let got = wire
            .request(
                "prompts/get",
                json!({ "name": "strategy_consultant", "arguments": { "situation": situation, "frameworks": frameworks } }),
            )
            .await;
        let expected = rendered(
            "strategy-consultant.json",
            &[("situation", json!(situation)), ("frameworks", json!(items))],
        );
        assert_eq!(
            got["messages"],
            json!([{ "role": "user", "content": { "type": "text", "text": expected } }])
        );
        assert!(got["description"].as_str().unwrap().starts_with("Gives a go / wait / stop"));
    }
    // Defaults fill what is not given.
    let got = wire
        .request(
            "prompts/get",
            json!({ "name": "teach_me_anything", "arguments": { "topic": "tides" } }),
        )
        .await;
    let expected = rendered("teach-me-anything.json", &[("topic", json!("tides"))]);
    assert_eq!(got["messages"][0]["content"]["text"], expected);
}

#[tokio::test]
async fn a_chat_tools_prompt_is_one_message_a_turn() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../llmtool-format/tests/fixtures/valid/chat-prompt.json");
    std::fs::copy(fixture, dir.path().join("chat-prompt.json")).unwrap();
    let (library, problems) =
        Library::load(&[dir.path().to_path_buf()], &LibraryOptions::default(), None);
    assert!(problems.is_empty(), "{problems:?}");
    let server = Server::new(library, runner(Ok("go")), Only::Both);
    let (mut wire, _) = Wire::initialized(server).await;
    let listed = wire.request("prompts/list", json!({})).await;
    let name = listed["prompts"][0]["name"].as_str().unwrap().to_owned();
    let got = wire
        .request(
            "prompts/get",
            json!({ "name": name, "arguments": { "question": "Why is grass green?" } }),
        )
        .await;
    let text = |role: &str, text: &str| json!({ "role": role, "content": { "type": "text", "text": text } });
    // MCP's prompt messages have no system role: the system turn is the user's.
    assert_eq!(
        got["messages"],
        json!([
            text("user", "You answer in one sentence, for a adult."),
            text("user", "Why is the sky blue?"),
            text("assistant", "Sunlight scatters off the air, and blue light scatters most."),
            text("user", "Why is grass green?"),
        ])
    );
}

#[tokio::test]
async fn bad_prompt_arguments_are_invalid_params_naming_every_problem() {
    let server = Server::new(library(""), runner(Ok("go")), Only::Both);
    let (mut wire, _) = Wire::initialized(server).await;
    let unknown = wire.call("prompts/get", json!({ "name": "nope" })).await;
    assert_eq!(unknown["error"]["code"], -32602);
    assert!(unknown["error"]["message"].as_str().unwrap().contains("unknown prompt `nope`"));
    let bad = wire
        .call(
            "prompts/get",
            json!({ "name": "strategy_consultant", "arguments": { "frameworks": "SWOT, Nope", "colour": "red" } }),
        )
        .await;
    let error = &bad["error"];
    assert_eq!(error["code"], -32602);
    let message = error["message"].as_str().unwrap();
    for part in
        ["no variable `colour`", "no value for `situation`", "`Nope` is not an allowed value"]
    {
        assert!(message.contains(part), "{message}");
    }
    // An MCP client gives arguments, not command-line flags: nothing tells it to use `--var`.
    assert!(!error.to_string().contains("--var"), "{error}");
    let codes: Vec<&str> = error["data"]["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes.len(), 3, "{error}");
    assert!(codes.iter().all(|c| c.starts_with("LT6")), "{codes:?}");
}

#[tokio::test]
async fn completion_offers_allowed_values_default_first() {
    let server = Server::new(library(""), runner(Ok("go")), Only::Both);
    let (mut wire, _) = Wire::initialized(server).await;
    let complete = |argument: &str, value: &str| {
        json!({
            "ref": { "type": "ref/prompt", "name": "strategy_consultant" },
            "argument": { "name": argument, "value": value },
        })
    };
    let all = wire.request("completion/complete", complete("frameworks", "")).await;
    assert_eq!(
        all["completion"]["values"],
        json!(["SWOT", "Porter's five forces", "PESTLE", "Ansoff matrix", "BCG matrix"])
    );
    let typed = wire.request("completion/complete", complete("frameworks", "p")).await;
    assert_eq!(typed["completion"]["values"], json!(["Porter's five forces", "PESTLE"]));
    assert_eq!(typed["completion"]["total"], 2);
    let next_item = wire.request("completion/complete", complete("frameworks", "SWOT, bc")).await;
    assert_eq!(next_item["completion"]["values"], json!(["SWOT, BCG matrix"]));
    let text = wire.request("completion/complete", complete("situation", "a")).await;
    assert_eq!(text["completion"]["values"], json!([]));
    let unknown = wire
        .call(
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "nope" }, "argument": { "name": "x", "value": "" } }),
        )
        .await;
    assert_eq!(unknown["error"]["code"], -32602);
}

#[tokio::test]
async fn tools_have_the_mcp_tool_schema_annotations_and_output_schema() {
    let server = Server::new(library(""), runner(Ok("go")), Only::Both);
    let (mut wire, _) = Wire::initialized(server).await;
    let listed = wire.request("tools/list", json!({})).await;
    let tools = listed["tools"].as_array().unwrap();
    // The nine prompt tools (the image generator among them), and the smart one
    // (examples/smart/).
    assert_eq!(tools.len(), 12);
    for tool in tools {
        assert_eq!(tool["annotations"]["readOnlyHint"], true, "{tool}");
        // Decided per tool, by the model each one runs on.
        let remote = tool["name"] == "strategy_consultant";
        assert_eq!(tool["annotations"]["openWorldHint"], remote, "{tool}");
    }
    let consultant = tools.iter().find(|t| t["name"] == "strategy_consultant").unwrap();
    let text = std::fs::read_to_string(examples().join("strategy-consultant.json")).unwrap();
    let document = llmtool_format::Document::from_text(text);
    let function = FunctionTool::from_tool(document.tool.as_ref().unwrap(), None, &[]).value;
    let (export, _) = FunctionFormat::McpTool.write(&function, false);
    assert_eq!(consultant["inputSchema"], export["inputSchema"]);
    assert_eq!(
        consultant["outputSchema"]["properties"]["answer"]["enum"],
        json!(["go", "wait", "stop"])
    );
    let free = tools.iter().find(|t| t["name"] == "teach_me_anything").unwrap();
    assert!(free.get("outputSchema").is_none(), "{free}");
}

#[tokio::test]
async fn tools_call_runs_the_rendered_prompt() {
    let scripted = runner(Ok("go"));
    let server = Server::new(library(""), scripted.clone(), Only::Both);
    let (mut wire, _) = Wire::initialized(server).await;
    let result = wire
        .request(
            "tools/call",
            json!({ "name": "image_prompt_writer", "arguments": { "subject": "a lighthouse", "aspect_ratio": "16:9" } }),
        )
        .await;
    assert_eq!(result["isError"], false);
    assert_eq!(result["content"][0]["text"], "go");
    assert!(result.get("structuredContent").is_none(), "{result}");
    let expected = rendered(
        "image-prompt-writer.json",
        &[("subject", json!("a lighthouse")), ("aspect ratio", json!("16:9"))],
    );
    assert_eq!(scripted.prompts.lock().unwrap().as_slice(), [expected]);
    let limited = wire
        .request(
            "tools/call",
            json!({ "name": "strategy_consultant", "arguments": { "situation": "x", "frameworks": ["SWOT"] } }),
        )
        .await;
    assert_eq!(limited["structuredContent"], json!({ "answer": "go" }));
    let invalid =
        wire.request("tools/call", json!({ "name": "strategy_consultant", "arguments": {} })).await;
    assert_eq!(invalid["isError"], true);
    assert!(invalid["content"][0]["text"].as_str().unwrap().contains("no value for `situation`"));
    let unknown = wire.call("tools/call", json!({ "name": "nope", "arguments": {} })).await;
    assert_eq!(unknown["error"]["code"], -32602);
}

#[tokio::test]
async fn a_failed_run_is_a_tool_error_with_the_reason() {
    let server = Server::new(library(""), runner(Err("the provider is unreachable")), Only::Both);
    let (mut wire, _) = Wire::initialized(server).await;
    let result = wire
        .request(
            "tools/call",
            json!({ "name": "teach_me_anything", "arguments": { "topic": "tides" } }),
        )
        .await;
    assert_eq!(result["isError"], true);
    assert_eq!(
        result["content"][0]["text"],
        "cannot reach the provider: the provider is unreachable"
    );
}

#[tokio::test]
async fn a_changed_library_is_announced_to_initialized_clients() {
    let server = Server::new(library(""), runner(Ok("go")), Only::Both);
    let (mut wire, _) = Wire::initialized(server.clone()).await;
    wire.request("prompts/list", json!({})).await;
    server.replace(library("v2_"));
    wire.notification("notifications/prompts/list_changed").await;
    wire.notification("notifications/tools/list_changed").await;
    let listed = wire.request("prompts/list", json!({})).await;
    assert_eq!(listed["prompts"][0]["name"], "v2_imeil_dabjang_doumi");
}

#[tokio::test]
async fn the_stateless_protocol_needs_no_initialize() {
    let server = Server::new(library(""), runner(Ok("go")), Only::Both);
    let mut wire = Wire::start(server.clone());
    let discovered = wire.modern("server/discover", json!({})).await;
    let versions = discovered["result"]["supportedVersions"].to_string();
    assert!(versions.contains(MODERN) && versions.contains("2025-11-25"), "{discovered}");
    let got = wire
        .modern(
            "prompts/get",
            json!({ "name": "teach_me_anything", "arguments": { "topic": "tides" } }),
        )
        .await;
    let expected = rendered("teach-me-anything.json", &[("topic", json!("tides"))]);
    assert_eq!(got["result"]["messages"][0]["content"]["text"], expected, "{got}");
    let bad = wire.modern("prompts/get", json!({ "name": "teach_me_anything" })).await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    // A `subscriptions/listen` stream carries the list changes.
    let id = 99;
    let mut params =
        json!({ "notifications": { "promptsListChanged": true, "toolsListChanged": true } });
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    wire.send(
        json!({ "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params }),
    )
    .await;
    wire.notification("notifications/subscriptions/acknowledged").await;
    server.replace(library("v2_"));
    let changed = wire.notification("notifications/prompts/list_changed").await;
    assert!(changed["params"]["_meta"].is_object(), "{changed}");
    wire.notification("notifications/tools/list_changed").await;
}
