//! [`Runtime`]: the providers as configured, the user's choice of model, one HTTP transport and
//! the local models, shared by every run of a process.

use std::borrow::Cow;
use std::num::NonZeroU32;
use std::sync::Arc;

use llmtool_format::model::Tool;
use llmtool_format::output::OutputSpec;
use llmtool_local::model::count_prompt_tokens;
use llmtool_local::store::DEFAULT_MODEL;
use llmtool_providers::pace::{Limits, Pacer};
use llmtool_providers::pricing::PriceEntry;
use llmtool_providers::resolve::{ModelOrigin, Providers, Target};
use llmtool_providers::run::{CHARACTERS_PER_TOKEN, RunRequest};
use llmtool_providers::transport::{RetryPolicy, Timeouts, Transport};
use llmtool_providers::{ApiKind, Params, Redactor};

use llmtool_dlp::Policy;

use crate::RunError;
use crate::dlp::{Guard, Guarded};
use crate::lifecycle::{RunKeeper, Unkept};
use crate::local::{Fetch, LocalModels, Progress};
use crate::log::{LogPolicy, RunLogKeeper};

/// How a runtime is set up; the defaults suit a server (nothing fetched, nothing printed).
#[derive(Clone)]
pub struct RuntimeOptions {
    /// The user's model (`--model`), over the tool's own list.
    pub model: Option<String>,
    /// The user's provider (`--provider`).
    pub provider: Option<String>,
    pub timeouts: Timeouts,
    pub retry: RetryPolicy,
    /// May tool files name local model files (`--allow-local-paths`; the config file's
    /// `allow_local_paths` also allows it).
    pub allow_local_paths: bool,
    /// Whether a missing local model may be fetched when a run needs it.
    pub fetch: Fetch,
    /// Where pull progress goes.
    pub progress: Option<Progress>,
    /// The local model's seed (`--seed`), over the tool's `seed` parameter.
    pub seed: Option<u64>,
    /// Secrets to hide besides the providers' keys (a server's token, say).
    pub secrets: Vec<String>,
    /// Whether runs are written to the run log (off unless the application turns it on).
    pub log: LogPolicy,
    /// The most requests at once to one provider (a batch's `-j`); the providers' own limits
    /// come from the config (see `llmtool_providers::pace`).
    pub concurrency: Option<NonZeroU32>,
    /// The data-loss prevention policy of every run (`--dlp`), over the tool's `x-dlp` and the
    /// config's.
    pub dlp: Option<Policy>,
    /// Runs only on providers and models the operator configured (see `allowed`): what a
    /// server sets, so that its clients cannot make it send requests anywhere else.
    pub only_configured: bool,
    /// The longest prompt a run sends, in bytes (the tool-file size limit, so that a batch
    /// row or a value cannot make a request larger than a tool file may be); `None`: no limit.
    pub max_prompt_bytes: Option<u64>,
    /// Whether smart tools run, and within which limits: `None` (the default, what a server
    /// starts with) refuses them, until the user runs one (`llmtool run`) or an operator
    /// enables them (`--smart-tools`).
    pub smart: Option<llmtool_sandbox::Limits>,
    /// What becomes of image tools' pictures (see [`crate::pictures`]); by default image
    /// tools are refused.
    pub pictures: crate::pictures::Pictures,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        Self {
            model: None,
            provider: None,
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
            allow_local_paths: false,
            fetch: Fetch::Never,
            progress: None,
            seed: None,
            secrets: Vec::new(),
            log: LogPolicy::Off,
            concurrency: None,
            dlp: None,
            only_configured: false,
            max_prompt_bytes: None,
            smart: None,
            pictures: crate::pictures::Pictures::Refused,
        }
    }
}

impl std::fmt::Debug for RuntimeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secrets themselves.
        f.debug_struct("RuntimeOptions")
            .field("model", &self.model)
            .field("provider", &self.provider)
            .field("allow_local_paths", &self.allow_local_paths)
            .field("fetch", &self.fetch)
            .field("seed", &self.seed)
            .field("secrets", &self.secrets.len())
            .field("log", &self.log)
            .field("dlp", &self.dlp)
            .finish_non_exhaustive()
    }
}

/// Parameters the user sets over the tool's own.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ParamOverrides {
    pub temperature: Option<f64>,
    pub max_tokens: Option<u64>,
}

/// A model chosen for one run by someone the runtime does not answer to (a server's client),
/// over the runtime's own choice (each `None` keeps it). It is trusted like a tool file's own
/// `model_version` list: it cannot name a model file unless local paths are allowed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Choice {
    pub model: Option<String>,
    pub provider: Option<String>,
}

/// Runs tools. Cheap to clone: clones share the transport and the loaded local models.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
    /// Where finished runs are kept (the run log, unless a server keeps them), and what of
    /// them.
    keeper: Arc<dyn RunKeeper>,
    policy: LogPolicy,
    /// The runs its keeper did not keep, for a command that runs many to say once.
    unkept: Arc<Unkept>,
}

struct Inner {
    providers: Providers,
    model: Option<String>,
    provider: Option<String>,
    transport: Transport,
    local: Arc<LocalModels>,
    redactor: Redactor,
    guard: Arc<Guard>,
    only_configured: bool,
    max_prompt_bytes: Option<u64>,
    smart: Option<llmtool_sandbox::Limits>,
    pictures: crate::pictures::Pictures,
    functions: crate::functions::FunctionSetup,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("model", &self.inner.model)
            .field("provider", &self.inner.provider)
            .finish_non_exhaustive()
    }
}

/// What a request asks, as [`Runtime::assemble`] takes it: the turns before, the prompt
/// (data-loss prevention applied), whether it is a chat's turns, the expected output, what
/// was swapped and what to say, and the conversation it is a turn of.
pub(crate) struct Asked {
    pub(crate) history: Vec<llmtool_providers::Message>,
    pub(crate) prompt: String,
    pub(crate) chat: bool,
    pub(crate) spec: OutputSpec,
    pub(crate) redaction: Option<Arc<llmtool_dlp::Redaction>>,
    pub(crate) notices: Vec<String>,
    pub(crate) cache_key: Option<String>,
}

impl Runtime {
    pub fn new(providers: Providers, options: RuntimeOptions) -> Result<Self, RunError> {
        let pacer = Pacer::new(Limits::by_provider(&providers.config), options.concurrency);
        let transport = Transport::new(options.timeouts, options.retry)?.with_pacer(pacer);
        let allow_paths = options.allow_local_paths || providers.config.allow_local_paths;
        let progress = options.progress.unwrap_or_else(|| Arc::new(|_| {}));
        let local = LocalModels::new(allow_paths, options.fetch, progress, options.seed);
        let redactor = providers.redactor().with_all(&options.secrets);
        let guard = Guard::new(options.dlp, providers.config.dlp.clone())?;
        let inner = Inner {
            providers,
            model: options.model,
            provider: options.provider,
            transport,
            local: Arc::new(local),
            redactor,
            guard: Arc::new(guard),
            only_configured: options.only_configured,
            max_prompt_bytes: options.max_prompt_bytes,
            smart: options.smart,
            pictures: options.pictures,
            functions: crate::functions::FunctionSetup::default(),
        };
        let keeper = Arc::new(RunLogKeeper::new());
        Ok(Self { inner: Arc::new(inner), keeper, policy: options.log, unkept: Arc::default() })
    }

    pub fn providers(&self) -> &Providers {
        &self.inner.providers
    }

    /// This runtime on `providers` instead (a team server's integrations, say): the same
    /// transport, local models, data-loss prevention, options and keeper, with the keys of
    /// `providers` hidden as its own are.
    #[must_use]
    pub fn with_providers(&self, providers: Providers) -> Runtime {
        let inner = &self.inner;
        let redactor = inner.redactor.merged(&providers.redactor());
        let inner = Inner {
            providers,
            model: inner.model.clone(),
            provider: inner.provider.clone(),
            transport: inner.transport.clone(),
            local: Arc::clone(&inner.local),
            redactor,
            guard: Arc::clone(&inner.guard),
            only_configured: inner.only_configured,
            max_prompt_bytes: inner.max_prompt_bytes,
            smart: inner.smart.clone(),
            pictures: inner.pictures.clone(),
            functions: inner.functions.clone(),
        };
        Runtime { inner: Arc::new(inner), ..self.clone() }
    }

    /// This runtime with its functions' setup changed by `change` (a server's integrations,
    /// the sources of library tools and MCP functions).
    fn with_function_setup(&self, functions: crate::functions::FunctionSetup) -> Runtime {
        let inner = &self.inner;
        let inner = Inner {
            providers: inner.providers.clone(),
            model: inner.model.clone(),
            provider: inner.provider.clone(),
            transport: inner.transport.clone(),
            local: Arc::clone(&inner.local),
            redactor: inner.redactor.clone(),
            guard: Arc::clone(&inner.guard),
            only_configured: inner.only_configured,
            max_prompt_bytes: inner.max_prompt_bytes,
            smart: inner.smart.clone(),
            pictures: inner.pictures.clone(),
            functions,
        };
        Runtime { inner: Arc::new(inner), ..self.clone() }
    }

    /// This runtime offering tools' functions from `setup` (a server's database and search
    /// integrations) rather than from the config file, with `sources` answering library
    /// tools and MCP functions.
    #[must_use]
    pub fn with_functions(
        &self,
        setup: llmtool_functions::Setup,
        sources: Option<Arc<dyn crate::FunctionSources>>,
    ) -> Runtime {
        self.with_function_setup(crate::functions::FunctionSetup::given(setup, sources))
    }

    /// This runtime with `sources` answering library tools and MCP functions, its built-ins
    /// still from the config file.
    #[must_use]
    pub fn with_function_sources(&self, sources: Arc<dyn crate::FunctionSources>) -> Runtime {
        self.with_function_setup(self.inner.functions.with_sources(sources))
    }

    /// What becomes of image tools' pictures.
    pub fn pictures(&self) -> &crate::pictures::Pictures {
        &self.inner.pictures
    }

    /// The transport of the runtime's requests (its timeouts, retries and pace).
    pub fn transport(&self) -> &Transport {
        &self.inner.transport
    }

    /// The model and provider `tool` runs on: the user's choice, else the tool's own
    /// `model_version` list, else the configured default (see `Providers::resolve`).
    pub fn target(&self, tool: &Tool) -> Result<Target, RunError> {
        self.target_on(tool, &Choice::default())
    }

    /// The same, with `choice` over the runtime's own model and provider; under
    /// `only_configured`, refused unless the operator enabled it ([`RunError::NotAllowed`]).
    pub fn target_on(&self, tool: &Tool, choice: &Choice) -> Result<Target, RunError> {
        if self.inner.only_configured {
            self.check_choice(choice)?;
        }
        let target = self.resolved(tool, choice)?;
        if self.inner.only_configured {
            let chosen = choice.model.is_some() || choice.provider.is_some();
            self.check_allowed(&target, chosen)?;
        }
        Ok(target)
    }

    /// The target of `tool` under `choice`, whatever is allowed.
    fn resolved(&self, tool: &Tool, choice: &Choice) -> Result<Target, RunError> {
        let inner = &self.inner;
        let mut target = inner.providers.resolve(
            choice.model.as_deref().or(inner.model.as_deref()),
            choice.provider.as_deref().or(inner.provider.as_deref()),
            &tool.models(),
        )?;
        if choice.model.is_some() && target.origin == ModelOrigin::User {
            // A server's client is trusted no more than a tool file: it may not make the
            // runtime open a model file (unless paths are allowed).
            target.origin = ModelOrigin::Tool;
        }
        Ok(target)
    }

    /// Whether `tool` runs on a model reached over the network (its MCP `openWorldHint`). A
    /// tool whose model cannot be chosen runs nowhere, so it is not remote.
    pub fn is_remote(&self, tool: &Tool) -> bool {
        self.target(tool).is_ok_and(|target| target.endpoint.api != ApiKind::Local)
    }

    /// Whether some of `tools`, or a tool that names no model (one added later, say), would
    /// run on the embedded default model: a server started with `--yes` pulls it at start,
    /// since it never downloads because a client asked.
    pub fn needs_default_local_model<'a>(&self, tools: impl IntoIterator<Item = &'a Tool>) -> bool {
        let inner = &self.inner;
        let is_default = |target: Target| {
            target.endpoint.api == ApiKind::Local && target.model == DEFAULT_MODEL.name
        };
        let unnamed =
            inner.providers.resolve(inner.model.as_deref(), inner.provider.as_deref(), &[]);
        unnamed.is_ok_and(is_default)
            || tools
                .into_iter()
                .any(|tool| self.resolved(tool, &Choice::default()).is_ok_and(is_default))
    }

    /// The request of a run of `tool` on `prompt` (rendered from it): its target, the tool's
    /// parameters under `overrides`, its expected output and the model's price.
    pub fn request(
        &self,
        tool: &Tool,
        prompt: String,
        overrides: ParamOverrides,
    ) -> Result<RunRequest, RunError> {
        self.request_on(tool, prompt, overrides, &Choice::default())
    }

    /// The same, on the model `choice` picks (a server's client choosing, say). Data-loss
    /// prevention applies here, as the policy of the run says: the prompt may be sent with
    /// its sensitive values swapped for placeholders (restored in the answer), or not at all
    /// ([`RunError::Blocked`]).
    pub fn request_on(
        &self,
        tool: &Tool,
        prompt: String,
        overrides: ParamOverrides,
        choice: &Choice,
    ) -> Result<RunRequest, RunError> {
        let target = self.target_on(tool, choice)?;
        if let Some(limit) = self.inner.max_prompt_bytes.filter(|&l| prompt.len() as u64 > l) {
            return Err(RunError::PromptTooLarge { bytes: prompt.len() as u64, limit });
        }
        let price = self.inner.providers.price(&target);
        if let Some(window) = price.as_ref().and_then(|entry| entry.price.max_input) {
            // The estimate `--estimate` and `--dry-run` give when no tokenizer is at hand.
            let tokens = prompt.chars().count().div_ceil(CHARACTERS_PER_TOKEN) as u64;
            if tokens > window {
                let model = format!("{}/{}", target.endpoint.provider, target.model);
                return Err(RunError::OverContextWindow { tokens, window, model });
            }
        }
        let policy = self.inner.guard.policy(tool);
        let (prompt, redaction, notice) = match self.inner.guard.apply(policy, prompt, None) {
            Guarded::Send { prompt, redaction, notice } => (prompt, redaction, notice),
            Guarded::Blocked(report) => return Err(RunError::Blocked(report)),
        };
        let asked = Asked {
            history: Vec::new(),
            prompt,
            chat: tool.is_chat(),
            spec: OutputSpec::of(tool),
            redaction,
            notices: notice.into_iter().collect(),
            cache_key: None,
        };
        self.assemble(tool, target, price, asked, overrides)
    }

    /// The functions `tool` names, as its runs offer them under its data-loss prevention
    /// policy (a prompt run's model calls them, a smart tool's code too); `None` for none.
    pub(crate) fn functions_of(
        &self,
        tool: &Tool,
    ) -> Result<Option<llmtool_providers::functions::Functions>, RunError> {
        let inner = &self.inner;
        let policy = inner.guard.policy(tool);
        inner.functions.functions_for(tool, &inner.providers.config, &inner.guard, policy)
    }

    /// The one place a [`RunRequest`] is put together, for a tool's own run and a follow-up
    /// alike: the tool's parameters under `overrides`, the model's price, the configured
    /// secrets, and what was asked; the provider is asked to cache what is sent when the
    /// request is a turn of a conversation.
    pub(crate) fn assemble(
        &self,
        tool: &Tool,
        target: Target,
        price: Option<PriceEntry>,
        asked: Asked,
        overrides: ParamOverrides,
    ) -> Result<RunRequest, RunError> {
        let params = Params::from_tool(tool.metadata.as_ref().and_then(|m| m.parameters.as_ref()));
        let functions = self.functions_of(tool)?;
        Ok(RunRequest {
            price,
            target,
            history: asked.history,
            prompt: asked.prompt,
            chat: asked.chat,
            params: Params {
                temperature: overrides.temperature.or(params.temperature),
                max_tokens: overrides.max_tokens.or(params.max_tokens),
                ..params
            },
            spec: asked.spec,
            redaction: asked.redaction,
            notices: asked.notices,
            secrets: self.inner.redactor.clone(),
            cache: asked.cache_key.is_some(),
            cache_key: asked.cache_key,
            functions,
        })
    }

    /// [`Runtime::request_on`] on a blocking thread. Scanning a long prompt for sensitive
    /// values takes CPU time that a server's async workers must not spend, or one client's
    /// megabyte of text stalls every other request; servers call this once they have a
    /// run's turn, so that scans count inside the run limit.
    pub async fn request_off_thread(
        &self,
        tool: &Tool,
        prompt: String,
        overrides: ParamOverrides,
        choice: &Choice,
    ) -> Result<RunRequest, RunError> {
        let (runtime, tool, choice) = (self.clone(), tool.clone(), choice.clone());
        tokio::task::spawn_blocking(move || runtime.request_on(&tool, prompt, overrides, &choice))
            .await
            .unwrap_or_else(|stopped| Err(RunError::Stopped(stopped.to_string())))
    }

    /// The data-loss prevention policy runs of `tool` follow.
    pub fn dlp_policy(&self, tool: &Tool) -> Policy {
        self.inner.guard.policy(tool)
    }

    /// How many tokens the prompt of `request` takes on its local model, counted with the
    /// model's own chat template and tokenizer (for `--dry-run`); `None` when it runs remotely
    /// or its model is not here yet (nothing is fetched to count).
    pub fn local_prompt_tokens(&self, request: &RunRequest) -> Option<Result<usize, RunError>> {
        if request.target.endpoint.api != ApiKind::Local {
            return None;
        }
        let path = self.inner.local.installed(&request.target)?;
        let messages = llmtool_local::provider::chat_messages(&request.messages());
        let tools = request.functions.as_ref().map_or_else(Vec::new, |functions| {
            llmtool_local::calls::template_tools(&functions.specs)
        });
        Some(count_prompt_tokens(&path, &messages, &tools).map_err(RunError::from))
    }

    /// Where runs are kept, and how.
    pub(crate) fn keeping(&self) -> (&dyn RunKeeper, LogPolicy, &Unkept) {
        (self.keeper.as_ref(), self.policy, &self.unkept)
    }

    /// How many runs of this runtime (and its clones) were not kept, and why the first was
    /// not: what a batch or a test run says once at its end.
    pub fn runs_not_kept(&self) -> Option<(u64, String)> {
        self.unkept.get()
    }

    /// The same runtime, keeping its runs in `keeper` as `policy` says (a team server keeps
    /// them in its library); it shares the transport and the local models with
    /// its clones.
    #[must_use]
    pub fn keeping_runs_in(self, keeper: Arc<dyn RunKeeper>, policy: LogPolicy) -> Runtime {
        Runtime { inner: self.inner, keeper, policy, unkept: Arc::default() }
    }

    /// The limits of smart runs, or `None` when smart tools do not run here.
    pub fn smart_limits(&self) -> Option<&llmtool_sandbox::Limits> {
        self.inner.smart.as_ref()
    }

    /// The operator's model (`--model`), if any.
    pub(crate) fn operator_model(&self) -> Option<&str> {
        self.inner.model.as_deref()
    }

    /// The operator's provider (`--provider`), if any.
    pub(crate) fn operator_provider(&self) -> Option<&str> {
        self.inner.provider.as_deref()
    }

    pub(crate) fn guard(&self) -> &Guard {
        &self.inner.guard
    }

    pub(crate) fn max_prompt_bytes(&self) -> Option<u64> {
        self.inner.max_prompt_bytes
    }

    pub(crate) fn local_models(&self) -> &Arc<LocalModels> {
        &self.inner.local
    }

    /// `text` with every configured secret, and URL credentials, hidden.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.inner.redactor.redact(text)
    }
}
