//! Runs a rendered tool on the configured provider, or on the local model, for the servers
//! (`llmtool mcp`): the same choice of model and the same enforcement of the expected output
//! as `llmtool run`, without a terminal.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use llmtool_core::model::Tool;
use llmtool_core::output::OutputSpec;
use llmtool_local::LocalModel;
use llmtool_local::provider::LocalEngine;
use llmtool_mcp::{RunFuture, Runner};
use llmtool_providers::engine::{Backend, Engine};
use llmtool_providers::resolve::{DEFAULT_LOCAL_MODEL, Providers, Target};

use crate::commands::model::{Fetch, local_model_path};
use crate::secrets;
use llmtool_providers::run::{RunOptions, RunRequest, run as run_tool};
use llmtool_providers::transport::{RetryPolicy, Timeouts, Transport};
use llmtool_providers::{ApiKind, Params};

/// What a server runs tools with.
pub(crate) struct ProviderRunner {
    inner: Arc<Inner>,
}

struct Inner {
    providers: Providers,
    model: Option<String>,
    provider: Option<String>,
    transport: Transport,
    /// May tool files name model files.
    allow_local_paths: bool,
    /// The local models, each loaded on first use, by name or path.
    local: Mutex<HashMap<String, Arc<dyn Engine>>>,
}

impl ProviderRunner {
    pub(crate) fn new(
        providers: Providers,
        model: Option<String>,
        provider: Option<String>,
        timeout: Duration,
        allow_local_paths: bool,
    ) -> anyhow::Result<Self> {
        let timeouts = Timeouts { total: timeout, ..Timeouts::default() };
        let transport = Transport::new(timeouts, RetryPolicy::default())?;
        let inner = Inner {
            providers,
            model,
            provider,
            transport,
            allow_local_paths,
            local: Mutex::default(),
        };
        Ok(Self { inner: Arc::new(inner) })
    }
}

impl ProviderRunner {
    /// Whether some of `tools` would run on the embedded default model: `--yes` pulls it at
    /// start for them, since a server never downloads because a client asked.
    pub(crate) fn needs_default_local_model<'a>(
        &self,
        tools: impl IntoIterator<Item = &'a Tool>,
    ) -> bool {
        let inner = &self.inner;
        let mut models: Vec<Vec<&str>> = tools.into_iter().map(Tool::models).collect();
        models.push(Vec::new());
        models.iter().any(|tool_models| {
            inner
                .providers
                .resolve(inner.model.as_deref(), inner.provider.as_deref(), tool_models)
                .is_ok_and(|t| t.endpoint.api == ApiKind::Local && t.model == DEFAULT_LOCAL_MODEL)
        })
    }
}

impl Runner for ProviderRunner {
    fn is_remote(&self) -> bool {
        // The model of a tool that names none: remote unless it resolves to the local one.
        self.inner
            .providers
            .resolve(self.inner.model.as_deref(), self.inner.provider.as_deref(), &[])
            .is_ok_and(|target| target.endpoint.api != ApiKind::Local)
    }

    fn run(&self, tool: Tool, prompt: String) -> RunFuture {
        let inner = self.inner.clone();
        // A tool error goes to the client: never with a key in it.
        Box::pin(async move {
            inner.run(&tool, prompt).await.map_err(|reason| secrets::redact(&reason).into_owned())
        })
    }
}

impl Inner {
    async fn run(&self, tool: &Tool, prompt: String) -> Result<String, String> {
        let metadata = tool.metadata.as_ref();
        let tool_models = tool.models();
        let target = self
            .providers
            .resolve(self.model.as_deref(), self.provider.as_deref(), &tool_models)
            .map_err(|e| e.to_string())?;
        if let Some(note) = &target.note {
            tracing::info!("{note}");
        }
        let request = RunRequest {
            price: self.providers.price(&target),
            target,
            prompt,
            params: Params::from_tool(metadata.and_then(|m| m.parameters.as_ref())),
            spec: OutputSpec::of(tool),
        };
        let options = RunOptions { stream: false, max_repairs: 2, raw: false, live: false };
        let backend = if request.target.endpoint.api == ApiKind::Local {
            Backend::Local(self.local_engine(&request.target).await?)
        } else {
            Backend::Http(&self.transport)
        };
        let report =
            run_tool(&backend, &request, options, &mut |_| {}).await.map_err(|e| e.to_string())?;
        match (report.output, report.error) {
            (Some(output), None) => Ok(output),
            (_, error) => Err(format!(
                "{} (after {} repair(s)); the model answered: {}",
                error.unwrap_or_else(|| "no answer".into()),
                report.repairs,
                report.raw
            )),
        }
    }

    /// The local model of `target`, loaded once (off the async threads: it reads a large
    /// file). A missing model is an error: a server never downloads because a client asked.
    async fn local_engine(&self, target: &Target) -> Result<Arc<dyn Engine>, String> {
        if let Some(engine) = self.local.lock().map_err(|e| e.to_string())?.get(&target.model) {
            return Ok(engine.clone());
        }
        let model = target.clone();
        let allow_paths = self.allow_local_paths;
        let engine = tokio::task::spawn_blocking(move || -> anyhow::Result<Arc<dyn Engine>> {
            let path: PathBuf = local_model_path(&model, Fetch::Never, allow_paths)?;
            let model = LocalModel::load(&path)?;
            Ok(Arc::new(LocalEngine::new(model, None)))
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
        let mut loaded = self.local.lock().map_err(|e| e.to_string())?;
        Ok(loaded.entry(target.model.clone()).or_insert(engine).clone())
    }
}
