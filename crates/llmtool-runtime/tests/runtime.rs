//! The shared run path: the model a tool runs on (and so its MCP hint) comes from one choice,
//! a tool file cannot make llmtool open a model file, a server never fetches a model, and an
//! answer that misses the expected output is a typed rejection after the repairs allowed.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use llmtool_config::{Config, Env};
use llmtool_format::Document;
use llmtool_format::model::Tool;
use llmtool_providers::resolve::Providers;
use llmtool_runtime::{Fetch, RunError, Runner as _, Runtime, RuntimeOptions};
use llmtool_testkit::{Mock, Reply};

fn tool(models: &[&str], expected: &serde_json::Value) -> Tool {
    let text = serde_json::json!({
        "model_prompt": "Is it going to rain?",
        "metadata": { "prompt_name": "Weather", "model_version": models, "expected_output": expected },
    });
    let document = Document::from_text(text.to_string());
    document.tool.unwrap()
}

fn runtime(config: &str, env: &[(&str, &str)], options: RuntimeOptions) -> Runtime {
    let providers =
        Providers::new(Config::parse(config).unwrap(), Env::from_pairs(env.iter().copied()));
    Runtime::new(providers, options).unwrap()
}

fn chat_answer(text: &str) -> Reply {
    let body = serde_json::json!({
        "choices": [{ "message": { "role": "assistant", "content": text }, "finish_reason": "stop" }],
        "usage": { "prompt_tokens": 9, "completion_tokens": 1 },
    });
    Reply::json(200, body.to_string())
}

#[test]
fn the_tools_own_models_decide_where_it_runs_and_its_hint() {
    let env = [("OPENAI_API_KEY", "sk-test-key-1234")];
    let runtime = runtime("", &env, RuntimeOptions::default());
    let remote = tool(&["gpt-4o"], &serde_json::json!({}));
    let local = tool(&["local/smollm2"], &serde_json::json!({}));
    let unnamed = tool(&[], &serde_json::json!({}));
    assert_eq!(runtime.target(&remote).unwrap().model, "gpt-4o");
    assert!(runtime.is_remote(&remote));
    assert_eq!(runtime.target(&local).unwrap().endpoint.provider, "local");
    assert!(!runtime.is_remote(&local), "the hint follows the tool's own model");
    assert!(!runtime.is_remote(&unnamed), "with no model named, the embedded one runs it");
    assert!(runtime.needs_default_local_model([&remote, &local]));
    assert!(runtime.needs_default_local_model([&unnamed]));
    assert!(
        runtime.needs_default_local_model([&remote]),
        "a tool added later that names no model would run on it"
    );

    let configured =
        self::runtime("default_model = \"openai/gpt-4o\"", &env, RuntimeOptions::default());
    assert!(!configured.needs_default_local_model([&remote]));
    assert!(configured.needs_default_local_model([&local]));

    // The user's choice is over every tool's own.
    let options =
        RuntimeOptions { model: Some("local/smollm2".into()), ..RuntimeOptions::default() };
    let chosen = self::runtime("", &env, options);
    assert!(!chosen.is_remote(&remote));
    assert!(chosen.needs_default_local_model([&remote]));
}

#[tokio::test]
async fn a_tool_file_cannot_make_llmtool_open_a_model_file() {
    let named = tool(&["local/nowhere/model.gguf"], &serde_json::json!({}));
    let runtime = runtime("", &[], RuntimeOptions::default());
    let error = runtime.answer(&named, "hi".into(), None).await.unwrap_err();
    assert!(matches!(error, RunError::ModelFileNotAllowed { .. }), "{error}");

    let options = RuntimeOptions { allow_local_paths: true, ..RuntimeOptions::default() };
    let allowed = self::runtime("", &[], options);
    let error = allowed.answer(&named, "hi".into(), None).await.unwrap_err();
    assert!(matches!(error, RunError::NoSuchModel { .. }), "{error}");
}

#[tokio::test]
async fn a_server_never_fetches_a_missing_model() {
    let models = tempfile::tempdir().unwrap();
    // SAFETY of the test: nextest runs each test in its own process.
    #[allow(unsafe_code, reason = "set before any thread of this test reads the environment")]
    unsafe {
        std::env::set_var("LLMTOOL_MODELS_DIR", models.path());
    }
    let runtime =
        runtime("", &[], RuntimeOptions { fetch: Fetch::Never, ..RuntimeOptions::default() });
    let error =
        runtime.answer(&tool(&["smollm2"], &serde_json::json!({})), "hi".into(), None).await;
    let error = error.unwrap_err();
    assert!(matches!(error, RunError::NotInstalled { .. }), "{error}");
    assert!(error.to_string().contains("llmtool model pull"), "{error}");
    assert_eq!(std::fs::read_dir(models.path()).unwrap().count(), 0, "nothing was written");
}

#[tokio::test]
async fn an_answer_is_enforced_and_a_rejection_is_typed() {
    let limited = serde_json::json!({ "type": "limited", "allowed_values": ["yes", "no"] });
    let weather = tool(&["mock/m"], &limited);
    let mock = Mock::start(vec![
        chat_answer("Probably."),
        chat_answer("yes"),
        chat_answer("Maybe."),
        chat_answer("Perhaps."),
        chat_answer("I cannot say."),
    ])
    .await;
    let config = format!(
        "[providers.mock]\napi = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"MOCK_KEY\"\njson_schema = false\n",
        mock.url
    );
    let secret = "mock-secret-key-5150";
    let runtime = runtime(&config, &[("MOCK_KEY", secret)], RuntimeOptions::default());
    assert!(runtime.is_remote(&weather));

    // The first answer misses the allowed values; the repair gets "yes".
    assert_eq!(runtime.answer(&weather, "Rain?".into(), None).await.unwrap().text, "yes");
    // Three misses: the first answer and the two repairs allowed.
    let error = runtime.answer(&weather, "Rain?".into(), None).await.unwrap_err();
    let RunError::Rejected(rejected) = &error else { panic!("not a rejection: {error}") };
    assert_eq!(rejected.repairs, 2);
    assert_eq!(rejected.raw, "I cannot say.");
    assert_eq!(mock.requests().len(), 5);
    assert!(mock.requests().iter().all(|r| r.headers.get("authorization").is_some()));

    // What a client sees of an error never holds a key.
    let leaked = RunError::Provider(llmtool_providers::ProviderError::Connection(format!(
        "refused with key {secret}"
    )));
    let shown = runtime.public_message(&leaked);
    assert!(!shown.contains(secret) && shown.contains("[redacted]"), "{shown}");
}

/// A tool whose policy is `policy`, on the mock.
fn guarded_tool(policy: &str) -> Tool {
    let text = serde_json::json!({
        "model_prompt": "Reply to {{mail}}",
        "x-dlp": policy,
        "metadata": { "prompt_name": "Reply", "model_version": ["mock/m"] },
    });
    Document::from_text(text.to_string()).tool.unwrap()
}

#[tokio::test]
async fn the_tools_dlp_policy_holds_on_the_path_servers_take() {
    let mock = Mock::start(vec![chat_answer("Sent to [EMAIL_1].")]).await;
    let config = format!(
        "[providers.mock]\napi = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"MOCK_KEY\"\n",
        mock.url
    );
    let runtime = runtime(&config, &[("MOCK_KEY", "k-2")], RuntimeOptions::default());
    let prompt = "Reply to ann@example.com";

    // `answer` is what the MCP server's tools/call and the library server use.
    let answer = runtime.answer(&guarded_tool("redact"), prompt.into(), None).await.unwrap();
    assert_eq!(answer.text, "Sent to ann@example.com.");
    assert_eq!(mock.requests()[0].body["messages"][0]["content"], "Reply to [EMAIL_1]");

    let error = runtime.answer(&guarded_tool("block"), prompt.into(), None).await.unwrap_err();
    let RunError::Blocked(report) = &error else { panic!("not blocked: {error}") };
    assert!(report.contains("an e-mail address (line 1, column 10)"), "{report}");
    assert!(!report.contains("ann@"));
    assert_eq!(mock.requests().len(), 1, "a blocked run sends nothing");

    // The user's `--dlp` is over the tool's own policy.
    let off =
        RuntimeOptions { dlp: Some(llmtool_runtime::DlpPolicy::Off), ..RuntimeOptions::default() };
    let overridden = self::runtime(&config, &[("MOCK_KEY", "k-2")], off);
    let request = overridden.request(
        &guarded_tool("block"),
        prompt.into(),
        llmtool_runtime::ParamOverrides::default(),
    );
    assert_eq!(request.unwrap().prompt, prompt);
}

#[test]
fn a_bad_dlp_config_is_refused_at_start() {
    let config = "[dlp]\npolicy = \"redact\"\n[[dlp.custom]]\nname = \"x\"\nregex = \"(\"\n";
    let providers = Providers::new(Config::parse(config).unwrap(), Env::from_pairs([]));
    let error = Runtime::new(providers, RuntimeOptions::default()).unwrap_err();
    assert!(error.to_string().contains("`x`"), "{error}");
}

/// A follow-up hides again the values hidden earlier in its conversation, even where the
/// scanner would not find them on their own (a custom rule's context), and follows the
/// stricter of the policy the conversation started under and the config's now.
#[test]
fn a_follow_up_hides_the_conversations_values_under_the_stricter_policy() {
    let config = "[providers.mock]\napi = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key_env = \"MOCK_KEY\"\n[dlp]\npolicy = \"redact\"\n[[dlp.custom]]\nname = \"employee id\"\nregex = '\\bEMP-(\\d{6})\\b'\nlabel = \"EMPLOYEE_ID\"\n";
    let runtime = runtime(config, &[("MOCK_KEY", "k-3")], RuntimeOptions::default());
    let text = serde_json::json!({
        "model_prompt": "Review {{who}}",
        "metadata": { "prompt_name": "Review", "model_version": ["mock/m"] },
    });
    let tool = Document::from_text(text.to_string()).tool.unwrap();
    let conversation = llmtool_runtime::Conversation {
        id: "01jqtest".into(),
        tool,
        provider: "mock".into(),
        model: "m".into(),
        exchanges: vec![llmtool_runtime::Exchange {
            turn: 1,
            asked: "Review EMP-[EMPLOYEE_ID_1]".into(),
            answer: "Fine.".into(),
        }],
        turns: 1,
        placeholders: [("[EMPLOYEE_ID_1]".to_owned(), "123456".to_owned())].into(),
        // Started with data-loss prevention off: the config's `redact` holds now.
        dlp: Some(llmtool_runtime::DlpPolicy::Off),
    };
    let overrides = llmtool_runtime::ParamOverrides::default();
    let asked = "What else did 123456 do? Mail ann@example.com";
    let request = runtime.follow_up(&conversation, asked.into(), overrides).unwrap();
    assert_eq!(request.prompt, "What else did [EMPLOYEE_ID_1] do? Mail [EMAIL_1]");
    assert_eq!(request.restore("[EMPLOYEE_ID_1], [EMAIL_1]"), "123456, ann@example.com");
    let block = RuntimeOptions {
        dlp: Some(llmtool_runtime::DlpPolicy::Block),
        ..RuntimeOptions::default()
    };
    let strict = self::runtime(config, &[("MOCK_KEY", "k-3")], block);
    let refused = strict.follow_up(&conversation, "And 123456?".into(), overrides);
    assert!(matches!(refused, Err(RunError::Blocked(_))), "a value hidden before is still one");
}

/// A conversation cannot grow a request past the longest prompt the runtime sends: its oldest
/// follow-ups are left out, as past a model's context window.
#[test]
fn a_conversations_history_is_bounded_by_the_prompt_limit() {
    let config = "[providers.mock]\napi = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key_env = \"MOCK_KEY\"\n";
    let options = RuntimeOptions { max_prompt_bytes: Some(2_000), ..RuntimeOptions::default() };
    let runtime = runtime(config, &[("MOCK_KEY", "k-4")], options);
    let text = serde_json::json!({ "model_prompt": "Plan", "metadata": { "prompt_name": "Plan", "model_version": ["mock/m"] } });
    let exchange =
        |turn| llmtool_runtime::Exchange { turn, asked: "q".repeat(600), answer: "a".repeat(100) };
    let conversation = llmtool_runtime::Conversation {
        id: "01jqbound".into(),
        tool: Document::from_text(text.to_string()).tool.unwrap(),
        provider: "mock".into(),
        model: "m".into(),
        exchanges: (1..=5).map(exchange).collect(),
        turns: 5,
        placeholders: std::collections::BTreeMap::new(),
        dlp: None,
    };
    let overrides = llmtool_runtime::ParamOverrides::default();
    let request = runtime.follow_up(&conversation, "Why?".into(), overrides).unwrap();
    let sent: usize = request.messages().iter().map(|m| m.content.len()).sum();
    assert!(sent <= 2_000, "{sent} bytes sent");
    assert_eq!(request.history[0].content, "q".repeat(600), "the tool's prompt stays");
    assert!(request.notices.iter().any(|n| n.contains("left out")), "{:?}", request.notices);
}

/// An image API takes one prompt: a follow-up to an image tool's run is refused, rather than
/// sent without the conversation before it.
#[test]
fn a_follow_up_to_an_image_tool_is_refused() {
    let config = "[providers.mock]\napi = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key_env = \"MOCK_KEY\"\n";
    let runtime = runtime(config, &[("MOCK_KEY", "k-4")], RuntimeOptions::default());
    let text = serde_json::json!({
        "model_prompt": "A picture of {{what}}",
        "metadata": { "prompt_name": "Picture", "model_version": ["mock/gpt-image-1"] },
    });
    let tool = Document::from_text(text.to_string()).tool.unwrap();
    let conversation = llmtool_runtime::Conversation {
        id: "01jqpicture".into(),
        tool,
        provider: "mock".into(),
        model: "gpt-image-1".into(),
        exchanges: vec![llmtool_runtime::Exchange {
            turn: 1,
            asked: "A picture of a cat".into(),
            answer: "pictures/image-1.png".into(),
        }],
        turns: 1,
        placeholders: std::collections::BTreeMap::new(),
        dlp: None,
    };
    let overrides = llmtool_runtime::ParamOverrides::default();
    let error = runtime.follow_up(&conversation, "Now in blue".into(), overrides).unwrap_err();
    assert!(error.to_string().contains("`Picture` makes pictures"), "{error}");
}

/// The one worst-case rule: the prompt's bytes (a token is at least one byte) at the dearer
/// input price, the longest answer at the dearer output price, paid for once and again for
/// each repair with the answers before; a provider batch's row once.
#[test]
fn the_worst_case_bounds_every_token_and_every_repair() {
    use llmtool_runtime::worst_case::{Sending, estimate};
    let config = "[prices.\"openai/gpt-4o\"]\ninput = 2.0\ncache_write = 3.0\noutput = 10.0\nreasoning = 12.0\n";
    let runtime =
        runtime(config, &[("OPENAI_API_KEY", "sk-test-key-1234")], RuntimeOptions::default());
    let text = serde_json::json!({
        "model_prompt": "Is it going to rain in Zürich?",
        "metadata": { "prompt_name": "Weather", "model_version": ["openai/gpt-4o"],
            "parameters": { "max_tokens": 100 } },
    });
    let tool = Document::from_text(text.to_string()).tool.unwrap();
    let overrides = llmtool_runtime::ParamOverrides::default();
    let request = runtime.request(&tool, tool.prompt().to_owned(), overrides).unwrap();
    let prompt = "Is it going to rain in Zürich?";
    assert_eq!((prompt.chars().count(), prompt.len()), (30, 31), "ü is two bytes");
    let bytes = 31.0;
    // Prices are per million tokens in the config file.
    let (input, output) = (3.0 / 1e6, 12.0 / 1e6);
    let once = bytes * input + 100.0 * output;
    let run = estimate(&request, None, Sending::Run);
    assert_eq!(run.output_limit, Some((100, "max_tokens")));
    assert_eq!(run.input_tokens, 8, "what is shown: 30 characters at four a token");
    let repairs =
        (bytes + 100.0) * input + 100.0 * output + (bytes + 200.0) * input + 100.0 * output;
    assert!((run.worst_cost.unwrap() - (once + repairs)).abs() < 1e-12, "{run:?}");
    let batch_row = estimate(&request, None, Sending::Once);
    assert!((batch_row.worst_cost.unwrap() - once).abs() < 1e-12, "{batch_row:?}");
    // Counted by the model's tokenizer, the count bounds the prompt.
    let counted = estimate(&request, Some(5), Sending::Once);
    assert!(counted.counted);
    assert!((counted.worst_cost.unwrap() - (5.0 * input + 100.0 * output)).abs() < 1e-12);
}
