//! Runs a rendered tool on the configured provider, or on the local model, for the servers
//! (`llmtool mcp`): the same choice of model and the same enforcement of the expected output
//! as `llmtool run`, without a terminal.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use llmtool_core::model::Tool;
use llmtool_core::output::OutputSpec;
use llmtool_local::LocalModel;
use llmtool_local::provider::LocalEngine;
use llmtool_mcp::{RunFuture, Runner};
use llmtool_providers::engine::{Backend, Engine};
use llmtool_providers::resolve::Providers;
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
    /// May the local model be downloaded when missing.
    fetch_local: bool,
    /// The local model, loaded on first use.
    local: Mutex<Option<Arc<dyn Engine>>>,
}

impl ProviderRunner {
    pub(crate) fn new(
        providers: Providers,
        model: Option<String>,
        provider: Option<String>,
        timeout: Duration,
        fetch_local: bool,
    ) -> anyhow::Result<Self> {
        let timeouts = Timeouts { total: timeout, ..Timeouts::default() };
        let transport = Transport::new(timeouts, RetryPolicy::default())?;
        let inner =
            Inner { providers, model, provider, transport, fetch_local, local: Mutex::new(None) };
        Ok(Self { inner: Arc::new(inner) })
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
        Box::pin(async move { inner.run(&tool, prompt).await })
    }
}

impl Inner {
    async fn run(&self, tool: &Tool, prompt: String) -> Result<String, String> {
        let metadata = tool.metadata.as_ref();
        let tool_models: Vec<&str> = metadata
            .and_then(|m| m.model_version.as_ref())
            .map(|list| list.value.iter().map(|m| m.value.as_str()).collect())
            .unwrap_or_default();
        let target = self
            .providers
            .resolve(self.model.as_deref(), self.provider.as_deref(), &tool_models)
            .map_err(|e| e.to_string())?;
        let request = RunRequest {
            price: self.providers.price(&target),
            target,
            prompt,
            params: Params::from_tool(metadata.and_then(|m| m.parameters.as_ref())),
            spec: OutputSpec::of(tool),
        };
        let options = RunOptions { stream: false, max_repairs: 2, raw: false, live: false };
        let backend = if request.target.endpoint.api == ApiKind::Local {
            Backend::Local(self.local_engine(&request.target.model).await?)
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

    /// The local model `name`, loaded once (off the async threads: it reads a large file).
    async fn local_engine(&self, name: &str) -> Result<Arc<dyn Engine>, String> {
        if let Some(engine) = self.local.lock().map_err(|e| e.to_string())?.clone() {
            return Ok(engine);
        }
        let name = name.to_owned();
        let fetch = self.fetch_local;
        let engine = tokio::task::spawn_blocking(move || -> anyhow::Result<Arc<dyn Engine>> {
            let path: PathBuf = crate::commands::model::local_model_path(&name, fetch)?;
            let model = LocalModel::load(&path)?;
            Ok(Arc::new(LocalEngine::new(model, None)))
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
        let mut slot = self.local.lock().map_err(|e| e.to_string())?;
        Ok(slot.get_or_insert(engine).clone())
    }
}
