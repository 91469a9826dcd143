//! The sandbox on the real CPython WASI runtime: results, model calls, and what an attacker's
//! code would try, each contained with a clear failure while the host stays unharmed.
//!
//! The runtime is the pinned module the test command installs (and compiles once, with
//! wasmtime's compiler from its wheel);
//! `LLMTOOL_PYTHON_WASM` names it.

#![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use llmtool_sandbox::compile::compiled_name;
use llmtool_sandbox::{
    Failure, Folders, Job, Limits, LlmCall, LlmFuture, LlmHost, NoModel, Python, RUNS_AT_ONCE, Ran,
};

const SHA256: &str = "e5dc5a398b07b54ea8fdb503bf68fb583d533f10ec3f930963e02b9505f7a763";

/// Where llmtool keeps the runtime compiled (`llmtool sandbox pull` compiles it once).
fn compiled() -> PathBuf {
    let module = std::env::var_os("LLMTOOL_PYTHON_WASM")
        .map(PathBuf::from)
        .expect("LLMTOOL_PYTHON_WASM names the CPython WASI module (scripts/test.sh installs it)");
    module.parent().unwrap().join("compiled").join(compiled_name(SHA256))
}

fn python() -> &'static Python {
    static PYTHON: OnceLock<Python> = OnceLock::new();
    PYTHON.get_or_init(|| {
        Python::load(&compiled()).expect("the runtime, compiled by `llmtool sandbox pull`, loads")
    })
}

#[test]
fn machine_code_anyone_else_could_have_written_is_never_loaded() {
    use std::os::unix::fs::PermissionsExt as _;
    let work = tempfile::tempdir().unwrap();
    let mode = |path: &std::path::Path, mode| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    let folder = work.path().join("compiled");
    std::fs::create_dir(&folder).unwrap();
    let copy = folder.join(compiled_name(SHA256));
    std::fs::copy(compiled(), &copy).unwrap();
    mode(&folder, 0o700);
    mode(&copy, 0o600);
    assert!(Python::load(&copy).is_ok(), "a private copy loads");
    for (folder_mode, file_mode) in [(0o777, 0o600), (0o700, 0o666), (0o770, 0o600)] {
        mode(&folder, folder_mode);
        mode(&copy, file_mode);
        let refused = Python::load(&copy).unwrap_err().to_string();
        assert!(
            refused.contains("only its owner can write"),
            "{folder_mode:o}/{file_mode:o}: {refused}"
        );
    }
    mode(&folder, 0o700);
    mode(&copy, 0o600);
    // Not machine code wasmtime made: refused with what to do, never run.
    std::fs::write(&copy, b"\x7fELF not a module").unwrap();
    let refused = Python::load(&copy).unwrap_err().to_string();
    assert!(refused.contains("llmtool sandbox pull"), "{refused}");
}

fn job(code: &str, variables: serde_json::Value) -> Job {
    let serde_json::Value::Object(variables) = variables else { panic!("variables: an object") };
    Job { code: code.to_owned(), variables }
}

async fn run_with(code: &str, limits: &Limits) -> Ran {
    let host = NoModel { reason: "no model in this test".into() };
    python()
        .run(&job(code, serde_json::json!({})), limits, Folders::default(), &host)
        .await
        .unwrap()
}

async fn run(code: &str) -> Ran {
    run_with(code, &Limits::default()).await
}

fn raised(ran: &Ran) -> (&str, &str) {
    match &ran.result {
        Err(Failure::Raised { kind, message, .. }) => (kind, message),
        other => panic!("expected an exception, got {other:?} (printed: {})", ran.printed),
    }
}

#[tokio::test]
async fn execute_gets_the_variables_and_its_result_is_the_answer() {
    let code = "def execute(variables):\n    words = variables['text'].split()\n    return f\"{len(words)} words, first {words[0]}\"\n";
    let host = NoModel { reason: "none".into() };
    let ran = python()
        .run(
            &job(code, serde_json::json!({"text": "the quick brown fox"})),
            &Limits::default(),
            Folders::default(),
            &host,
        )
        .await
        .unwrap();
    assert_eq!(ran.result, Ok("4 words, first the".to_owned()));
}

#[tokio::test]
async fn a_result_that_is_not_text_is_given_as_json_and_prints_are_kept_apart() {
    let ran =
        run("def execute(variables):\n    print('working')\n    return {'n': 3, 'ok': True}\n")
            .await;
    assert_eq!(ran.result, Ok(r#"{"n": 3, "ok": true}"#.to_owned()));
    assert_eq!(ran.printed, "working\n");
}

#[tokio::test]
async fn an_exception_names_its_line_in_tool_code() {
    let ran = run("def execute(variables):\n    x = 1\n    return variables['missing']\n").await;
    assert_eq!(raised(&ran), ("KeyError", "'missing'"));
    assert_eq!(ran.result.unwrap_err().line(), Some(3));
}

#[tokio::test]
async fn code_without_execute_is_refused() {
    let ran = run("x = 1\n").await;
    assert_eq!(ran.result, Err(Failure::NoExecute));
}

/// A host that answers each call with the prompt upper-cased, and remembers the calls.
#[derive(Default)]
struct Shouting {
    calls: Mutex<Vec<LlmCall>>,
}

impl LlmHost for Shouting {
    fn call(&self, call: LlmCall) -> LlmFuture<'_> {
        let answer = call.prompt.to_uppercase();
        self.calls.lock().unwrap().push(call);
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(700)).await;
            Ok(answer)
        })
    }
}

#[tokio::test]
async fn llm_calls_reach_the_host_with_their_parameters_and_waiting_is_not_cpu_time() {
    let host = Arc::new(Shouting::default());
    let code = "def execute(variables):\n    a = llm('summarise ' + variables['text'], temperature=0.2)\n    b = llm('again')\n    return a + ' / ' + b\n";
    // Two answers take 1.4 s to come: over the CPU limit, were waiting counted.
    let limits = Limits { cpu: Duration::from_secs(1), ..Limits::default() };
    let ran = python()
        .run(
            &job(code, serde_json::json!({"text": "this"})),
            &limits,
            Folders::default(),
            host.as_ref(),
        )
        .await
        .unwrap();
    assert_eq!(ran.result, Ok("SUMMARISE THIS / AGAIN".to_owned()));
    let calls = host.calls.lock().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].params.get("temperature"), Some(&serde_json::json!(0.2)));
    assert_eq!(ran.llm_calls, 2);
}

#[tokio::test]
async fn a_refused_model_call_raises_llm_error_in_the_code() {
    let ran = run("def execute(variables):\n    try:\n        llm('hi')\n    except LlmError as e:\n        return 'refused: ' + str(e)\n").await;
    assert_eq!(ran.result, Ok("refused: no model in this test".to_owned()));
}

#[tokio::test]
async fn model_calls_past_the_limit_are_refused() {
    let host = Shouting::default();
    let code = "def execute(variables):\n    for i in range(5):\n        llm('x')\n";
    let limits = Limits { llm_calls: 2, ..Limits::default() };
    let ran = python()
        .run(&job(code, serde_json::json!({})), &limits, Folders::default(), &host)
        .await
        .unwrap();
    let (kind, message) = raised(&ran);
    assert_eq!(kind, "LlmError");
    assert!(message.contains("at most 2 times"), "{message}");
    assert_eq!(host.calls.lock().unwrap().len(), 2);
}

// What an attacker's code tries.

#[tokio::test]
async fn host_files_cannot_be_read() {
    for path in ["/etc/passwd", "~/.ssh/id_rsa", "/root/.ssh/authorized_keys", "../../etc/hostname"]
    {
        let code = format!(
            "import os\ndef execute(variables):\n    return open(os.path.expanduser({path:?})).read()\n"
        );
        let ran = run(&code).await;
        let (kind, _) = raised(&ran);
        assert!(
            matches!(kind, "FileNotFoundError" | "PermissionError" | "OSError"),
            "{path}: {kind}"
        );
    }
}

#[tokio::test]
async fn the_environment_is_empty() {
    let ran = run("import os\ndef execute(variables):\n    return repr(dict(os.environ))\n").await;
    assert_eq!(ran.result, Ok("{}".to_owned()));
}

#[tokio::test]
async fn sockets_cannot_be_opened() {
    let ran = run("import socket\ndef execute(variables):\n    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n    s.connect(('127.0.0.1', 22))\n    return 'connected'\n").await;
    assert!(ran.result.is_err(), "{:?}", ran.result);
    assert_ne!(ran.result, Ok("connected".to_owned()));
}

#[tokio::test]
async fn processes_cannot_be_started() {
    for code in [
        "import os\ndef execute(variables):\n    return str(os.system('touch /tmp/llmtool-escaped'))\n",
        "import subprocess\ndef execute(variables):\n    return subprocess.run(['id'], capture_output=True).stdout\n",
        "import os\ndef execute(variables):\n    os.execv('/bin/sh', ['sh'])\n",
        "import ctypes\ndef execute(variables):\n    return str(ctypes.CDLL(None).system(b'id'))\n",
    ] {
        let ran = run(code).await;
        assert!(matches!(ran.result, Err(Failure::Raised { .. })), "{code}: {:?}", ran.result);
    }
    assert!(!std::path::Path::new("/tmp/llmtool-escaped").exists());
}

#[tokio::test]
async fn an_endless_loop_stops_at_the_cpu_limit() {
    let limits = Limits { cpu: Duration::from_secs(1), ..Limits::default() };
    let ran = run_with("def execute(variables):\n    while True:\n        pass\n", &limits).await;
    assert_eq!(ran.result, Err(Failure::OutOfTime { limit: Duration::from_secs(1) }));
}

#[tokio::test]
async fn a_memory_bomb_stops_at_the_memory_limit() {
    let limits = Limits { memory: 64 << 20, ..Limits::default() };
    let ran = run_with("def execute(variables):\n    blocks = []\n    while True:\n        blocks.append(bytearray(8 << 20))\n", &limits).await;
    assert_eq!(ran.result, Err(Failure::OutOfMemory { limit: 64 << 20 }));
}

#[tokio::test]
async fn a_deep_recursion_is_stopped() {
    let limits = Limits { memory: 64 << 20, ..Limits::default() };
    let code = "import sys\nsys.setrecursionlimit(10**9)\ndef down(n):\n    return down(n + 1) + 1\ndef execute(variables):\n    return str(down(0))\n";
    let ran = run_with(code, &limits).await;
    assert!(
        matches!(
            &ran.result,
            Err(Failure::StackExhausted | Failure::OutOfMemory { .. } | Failure::Raised { .. })
        ),
        "{:?} {}",
        ran.result,
        ran.printed
    );
}

#[tokio::test]
async fn a_huge_result_and_endless_printing_are_bounded() {
    let limits = Limits { result_bytes: 1 << 16, printed_bytes: 1 << 10, ..Limits::default() };
    let ran = run_with("def execute(variables):\n    return 'x' * (1 << 20)\n", &limits).await;
    assert_eq!(ran.result, Err(Failure::TooMuchOutput { limit: 1 << 16 }));
    let ran = run_with(
        "def execute(variables):\n    for i in range(20000):\n        print('line', i)\n    return 'done'\n",
        &limits,
    )
    .await;
    assert_eq!(ran.result, Ok("done".to_owned()));
    assert_eq!(ran.printed.len(), 1 << 10);
    assert!(ran.printed_dropped > 100_000);
}

#[tokio::test]
async fn only_the_scratch_folder_can_be_written() {
    let scratch = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escaped.txt");
    let code = format!(
        "def execute(variables):\n    open('/scratch/notes.txt', 'w').write('kept')\n    try:\n        open({:?}, 'w').write('x')\n        return 'escaped'\n    except OSError as e:\n        return 'refused'\n",
        target.display().to_string()
    );
    let host = NoModel { reason: "none".into() };
    let ran = python()
        .run(
            &job(&code, serde_json::json!({})),
            &Limits::default(),
            Folders { scratch: Some(scratch.path()), ..Folders::default() },
            &host,
        )
        .await
        .unwrap();
    assert_eq!(ran.result, Ok("refused".to_owned()));
    assert!(!target.exists());
    assert_eq!(std::fs::read_to_string(scratch.path().join("notes.txt")).unwrap(), "kept");
    let escape = "def execute(variables):\n    open('/scratch/../escaped.txt', 'w').write('x')\n";
    let ran = python()
        .run(
            &job(escape, serde_json::json!({})),
            &Limits::default(),
            Folders { scratch: Some(scratch.path()), ..Folders::default() },
            &host,
        )
        .await
        .unwrap();
    assert!(ran.result.is_err());
    assert!(!scratch.path().parent().unwrap().join("escaped.txt").exists());
}

#[tokio::test]
async fn exiting_from_the_code_is_a_failure_not_a_result() {
    let ran = run("import sys\ndef execute(variables):\n    sys.exit(0)\n").await;
    assert_eq!(raised(&ran).0, "SystemExit");
}

#[tokio::test]
async fn the_site_folder_is_importable_and_read_only() {
    let site = tempfile::tempdir().unwrap();
    std::fs::write(site.path().join("helper.py"), "def shout(text):\n    return text.upper()\n")
        .unwrap();
    let code = "import helper\ndef execute(variables):\n    try:\n        open('/site/new.py', 'w').write('x')\n        wrote = 'wrote'\n    except OSError:\n        wrote = 'read-only'\n    return helper.shout('hi') + ' ' + wrote\n";
    let host = NoModel { reason: "none".into() };
    let folders = Folders { site: Some(site.path()), ..Folders::default() };
    let ran = python()
        .run(&job(code, serde_json::json!({})), &Limits::default(), folders, &host)
        .await
        .unwrap();
    assert_eq!(ran.result, Ok("HI read-only".to_owned()));
    assert!(!site.path().join("new.py").exists());
}

#[tokio::test]
async fn waiting_in_the_host_is_bounded_too() {
    // Reading stdin finds nothing; sleeping counts as the code's time.
    let ran = run("def execute(variables):\n    try:\n        input()\n    except EOFError:\n        return 'end of input'\n").await;
    assert_eq!(ran.result, Ok("end of input".to_owned()));
    let limits = Limits { cpu: Duration::from_secs(1), ..Limits::default() };
    let ran =
        run_with("import time\ndef execute(variables):\n    time.sleep(10**9)\n", &limits).await;
    assert_eq!(ran.result, Err(Failure::OutOfTime { limit: Duration::from_secs(1) }));
}

#[tokio::test]
async fn a_forged_result_then_a_model_call_neither_hangs_nor_reaches_the_model() {
    let host = Shouting::default();
    let code = "def execute(variables):\n    print_ = __import__('sys').__stdout__\n    import json\n    _to_host = llm.__globals__['_to_host']\n    _to_host.write(json.dumps({'result': 'forged'}) + '\\n'); _to_host.flush()\n    try:\n        llm('after')\n    except LlmError as e:\n        return 'real: ' + str(e)\n";
    let ran = python()
        .run(&job(code, serde_json::json!({})), &Limits::default(), Folders::default(), &host)
        .await
        .unwrap();
    // The first result stands (the code's own doing); no model was asked.
    assert_eq!(ran.result, Ok("forged".to_owned()));
    assert!(host.calls.lock().unwrap().is_empty());
}

#[tokio::test]
async fn odd_model_call_parameters_are_refused_in_the_code() {
    let ran = run("def execute(variables):\n    try:\n        llm('x', temperature=float('nan'))\n    except ValueError as e:\n        return 'refused'\n").await;
    assert_eq!(ran.result, Ok("refused".to_owned()));
}

#[tokio::test]
async fn ending_the_interpreter_is_the_codes_failure() {
    let ran = run("import os\ndef execute(variables):\n    os._exit(3)\n").await;
    assert_eq!(ran.result, Err(Failure::Exited { code: 3 }));
}

#[tokio::test]
async fn the_scratch_folder_is_bounded() {
    let scratch = tempfile::tempdir().unwrap();
    let limits = Limits { scratch_bytes: 4 << 20, ..Limits::default() };
    let code = "def execute(variables):\n    with open('/scratch/big', 'wb') as f:\n        while True:\n            f.write(b'x' * (1 << 20))\n            f.flush()\n";
    let host = NoModel { reason: "none".into() };
    let folders = Folders { scratch: Some(scratch.path()), ..Folders::default() };
    let ran =
        python().run(&job(code, serde_json::json!({})), &limits, folders, &host).await.unwrap();
    assert_eq!(ran.result, Err(Failure::ScratchFull { limit: 4 << 20 }));
}

/// A file written after it is unlinked is counted too: it leaves the folder's listing, but
/// the disk keeps it while it is open (one run once wrote 1.5 GiB so, past a 256 MiB limit).
#[tokio::test]
async fn a_file_written_after_it_is_unlinked_counts_against_the_scratch_limit() {
    let scratch = tempfile::tempdir().unwrap();
    let limits = Limits { scratch_bytes: 4 << 20, ..Limits::default() };
    // 256 MiB at most, over two or three seconds: the watchdog looks every 100 ms.
    let code = "import os, time\n\ndef execute(variables):\n    f = open('/scratch/hidden', 'wb')\n    os.unlink('/scratch/hidden')\n    for _ in range(256):\n        f.write(b'x' * (1 << 20))\n        f.flush()\n        time.sleep(0.01)\n    return 'wrote 256 MiB unseen'\n";
    let host = NoModel { reason: "none".into() };
    let folders = Folders { scratch: Some(scratch.path()), ..Folders::default() };
    let ran =
        python().run(&job(code, serde_json::json!({})), &limits, folders, &host).await.unwrap();
    assert_eq!(ran.result, Err(Failure::ScratchFull { limit: 4 << 20 }));
}

/// At most [`RUNS_AT_ONCE`] runs share the process, whoever starts more: each may hold its
/// scratch folder's limit on disk, so this bounds what all of them hold. Two more than that
/// start together; each notes in a shared folder when it starts and ends (waiting three seconds
/// in between, so that without the cap all would be under way together), and no more than the
/// cap are ever between the two.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_more_than_the_cap_of_runs_are_under_way_at_once() {
    let shared = tempfile::tempdir().unwrap();
    let code = "import os, time\n\ndef execute(variables):\n    with open('/scratch/log', 'a') as f:\n        f.write('start\\n')\n    time.sleep(3)\n    with open('/scratch/log', 'a') as f:\n        f.write('end\\n')\n    return 'ok'\n";
    let mut runs = tokio::task::JoinSet::new();
    for _ in 0..RUNS_AT_ONCE + 2 {
        let dir = shared.path().to_path_buf();
        runs.spawn(async move {
            let host = NoModel { reason: "none".into() };
            let folders = Folders { scratch: Some(&dir), ..Folders::default() };
            let job = job(code, serde_json::json!({}));
            python().run(&job, &Limits::default(), folders, &host).await.unwrap()
        });
    }
    let ran = runs.join_all().await;
    assert!(ran.iter().all(|ran| ran.result.as_deref() == Ok("ok")), "every run ends well");
    let log = std::fs::read_to_string(shared.path().join("log")).unwrap();
    let (mut under_way, mut most) = (0usize, 0usize);
    for line in log.lines() {
        if line == "start" {
            under_way += 1;
            most = most.max(under_way);
        } else {
            under_way -= 1;
        }
    }
    assert_eq!(log.lines().count(), 2 * (RUNS_AT_ONCE + 2), "{log}");
    assert!(most <= RUNS_AT_ONCE, "{most} runs under way at once:\n{log}");
}

#[tokio::test]
async fn open_files_are_bounded_and_the_host_keeps_its_descriptors() {
    let scratch = tempfile::tempdir().unwrap();
    let limits = Limits { open_files: 64, ..Limits::default() };
    let host = NoModel { reason: "none".into() };
    let (limits, host) = (&limits, &host);
    let run = |code: &'static str| {
        let folders = Folders { scratch: Some(scratch.path()), ..Folders::default() };
        let job = job(code, serde_json::json!({}));
        async move { python().run(&job, limits, folders, host).await.unwrap() }
    };
    // Opening and closing many, one at a time, is fine.
    let closed = run("def execute(variables):\n    for i in range(500):\n        with open(f'/scratch/f{i % 5}', 'w') as f:\n            f.write('x')\n    return 'ok'\n").await;
    assert_eq!(closed.result.as_deref(), Ok("ok"));
    // Holding more than the limit open at once ends the run, whatever catches the error.
    let hoarding = "def execute(variables):\n    held = []\n    for i in range(10_000):\n        try:\n            held.append(open(f'/scratch/h{i}', 'w'))\n        except OSError:\n            pass\n    return str(len(held))\n";
    let before = std::fs::read_dir("/proc/self/fd").unwrap().count();
    let ran = run(hoarding).await;
    assert_eq!(ran.result, Err(Failure::TooManyFiles { limit: 64 }));
    let after = std::fs::read_dir("/proc/self/fd").unwrap().count();
    assert!(
        after <= before + 2,
        "the guest's descriptors are closed with it: {before} then {after}"
    );
}

#[tokio::test]
async fn a_run_dropped_while_waiting_for_a_model_stops_its_guest() {
    /// A host whose model never answers.
    struct Silent;
    impl LlmHost for Silent {
        fn call(&self, _call: LlmCall) -> LlmFuture<'_> {
            Box::pin(std::future::pending())
        }
    }
    let code = "def execute(variables):\n    return llm('never')\n";
    let job = job(code, serde_json::json!({}));
    let limits = Limits::default();
    let run = python().run(&job, &limits, Folders::default(), &Silent);
    // Dropped while the guest waits in its model call.
    assert!(tokio::time::timeout(Duration::from_millis(500), run).await.is_err());
    // Its thread ends (Linux names it in /proc).
    let guests = || {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(Result::ok)
            .filter(|task| {
                std::fs::read_to_string(task.path().join("comm"))
                    .is_ok_and(|name| name.trim() == "llmtool-guest")
            })
            .count()
    };
    let mut left = guests();
    for _ in 0..100 {
        if left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        left = guests();
    }
    assert_eq!(left, 0, "the dropped run's guest thread is gone");
}
