//! The gptel and llm.el forms `llmtool export` writes run their tool: Emacs in batch loads
//! each form with stand-ins for `gptel-make-tool` and `llm-make-tool` that keep the slots,
//! calls its function as both packages do (the values in the order of `:args`, a callback
//! first when `:async`), and gets the mock provider's answer through `llmtool call`. A value of
//! the wrong type, and a tool file moved after the export, come back as error messages.
//!
//! Needs `emacs` (Debian's emacs-nox), which `scripts/test.sh` installs.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::Path;
use std::process::Command;

use llmtool_testkit::{Mock, Reply};
use serde_json::{Value, json};

/// A tool whose first variable's name is no parameter name (`received email`): its
/// exported parameter is `received_email`.
const TOOL: &str = include_str!("fixtures/reply-helper.json");

/// A streamed answer, as the provider sends one.
fn answer(text: &str) -> Reply {
    let chunk = json!({ "choices": [{ "index": 0, "delta": { "content": text } }] });
    let usage = json!({ "choices": [], "usage": { "prompt_tokens": 10, "completion_tokens": 5 } });
    Reply::sse(&[&chunk.to_string(), &usage.to_string(), "[DONE]"])
}

fn llmtool() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_llmtool"))
}

/// `llmtool export reply.json --to TARGET FLAGS...` in `dir`, written to `file`.
fn export(dir: &Path, target: &str, flags: &[&str], file: &str) {
    let out = Command::new(llmtool())
        .args(["export", "reply.json", "--to", target])
        .args(flags)
        .current_dir(dir)
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::write(dir.join(file), out.stdout).unwrap();
}

/// Each form called in Emacs with `values`: one JSON line each. `program` sets
/// `llmtool-program`; without it, the `llmtool` on `PATH` runs.
fn call_in_emacs(dir: &Path, lexical: bool, program: bool, calls: &[(&str, Value)]) -> Vec<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/emacs/call-exported.el");
    let mut command = Command::new("emacs");
    command.args(["--batch", "-Q"]);
    if program {
        command.args(["--eval", &format!("(setq llmtool-program {:?})", llmtool().display())]);
    }
    command.arg("-l").arg(&script).args([
        "-f",
        "llmtool-call-exported",
        if lexical { "t" } else { "nil" },
    ]);
    for (file, values) in calls {
        command.arg(dir.join(file)).arg(values.to_string());
    }
    let path = format!(
        "{}:{}",
        llmtool().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = command
        .current_dir(dir)
        .env("PATH", path)
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env("LLMTOOL_CONFIG", dir.join("config.toml"))
        .env("LLMTOOL_DATA_DIR", dir.join("data"))
        .env("MOCK_KEY", "sk-emacs-test-93ab")
        .env_remove("LLMTOOL_MODEL")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap_or_else(|error| {
            panic!("cannot run emacs ({error}): scripts/test.sh installs it (Debian emacs-nox)")
        });
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

#[test]
fn exported_gptel_and_llm_el_tools_return_the_models_answer_async_and_sync() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let answers = ["gptel async", "gptel sync", "llm.el async", "llm.el sync", "dynamic"];
    let mock = runtime.block_on(Mock::start(answers.iter().map(|a| answer(a)).collect()));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("reply.json"), TOOL).unwrap();
    let config = format!(
        "[providers.mock]\napi = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"MOCK_KEY\"\n",
        mock.url
    );
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    export(dir.path(), "gptel", &["--confirm"], "gptel-async.el");
    export(dir.path(), "gptel", &["--sync"], "gptel-sync.el");
    export(dir.path(), "llm-el", &[], "llm-async.el");
    export(dir.path(), "llm-el", &["--sync"], "llm-sync.el");
    let gptel = std::fs::read_to_string(dir.path().join("gptel-async.el")).unwrap();
    assert!(gptel.contains(" :confirm t") && gptel.contains(" :category \"llmtool\""), "{gptel}");
    assert!(
        !std::fs::read_to_string(dir.path().join("llm-async.el")).unwrap().contains(":category")
    );

    let values = json!(["Can we meet on Friday?", null, ["dates"]]);
    let calls = [
        ("gptel-async.el", values.clone()),
        ("gptel-sync.el", values.clone()),
        ("llm-async.el", values.clone()),
        ("llm-sync.el", values.clone()),
    ];
    let results = call_in_emacs(dir.path(), true, true, &calls);
    let got: Vec<(&str, bool)> = results
        .iter()
        .map(|r| (r["answer"].as_str().unwrap(), r["async"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            ("gptel async", true),
            ("gptel sync", false),
            ("llm.el async", true),
            ("llm.el sync", false)
        ]
    );
    assert_eq!(results[0]["category"], "llmtool");
    let prompts: Vec<String> = mock
        .requests()
        .iter()
        .map(|r| r.body["messages"].as_array().unwrap().last().unwrap()["content"].to_string())
        .collect();
    assert!(
        prompts
            .iter()
            .all(|p| p.contains("Reply to Can we meet on Friday? in a warm tone, covering dates.")),
        "{prompts:?}"
    );

    // Evaluated without lexical binding, and with the `llmtool` found on `PATH`.
    let dynamic = call_in_emacs(dir.path(), false, false, &calls[..1]);
    assert_eq!(dynamic[0]["answer"], "dynamic", "{dynamic:?}");

    // A value of the wrong type, and a tool moved after the export: messages, not signals.
    let wrong = json!([{ "not": "text" }, null, ["dates"]]);
    let wrong_calls = [("gptel-async.el", wrong.clone()), ("llm-sync.el", wrong)];
    for result in call_in_emacs(dir.path(), true, true, &wrong_calls) {
        let said = result["answer"].as_str().unwrap();
        assert!(said.starts_with("Error: llmtool call: "), "{said}");
        assert!(said.contains("`received_email` must be a string, found an object"), "{said}");
    }
    std::fs::rename(dir.path().join("reply.json"), dir.path().join("moved.json")).unwrap();
    for result in call_in_emacs(dir.path(), true, true, &calls[..2]) {
        let said = result["answer"].as_str().unwrap();
        assert!(said.starts_with("Error: llmtool call: ") && said.contains("reply.json"), "{said}");
    }
    assert_eq!(mock.requests().len(), 5, "nothing was sent for a refused call");
}
