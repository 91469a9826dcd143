//! What a server may run: only what its operator configured. A server's clients (the library's
//! run API, MCP tool calls) must not make it send requests to providers nobody set up, such as
//! a local-server preset on a loopback port (`"model": "ollama/llama3"`). Under
//! [`crate::RuntimeOptions::only_configured`], a run's provider must be enabled, and a model a
//! client chose must be one of [`Runtime::allowed_targets`], which is what `GET /models` lists.

use llmtool_providers::endpoint::ApiKind;
use llmtool_providers::presets::preset;
use llmtool_providers::resolve::Target;

use crate::{RunError, Runtime};

impl Runtime {
    /// Whether provider `name` is enabled: named by the operator (`--provider`, the provider of
    /// `--model` or of the config's `default_model`), or ready by the config and environment
    /// (a key set, a `[providers.NAME]` table for a server without one). The embedded local
    /// provider is enabled: it sends nothing anywhere, and runs only installed models.
    pub(crate) fn enabled(&self, name: &str) -> bool {
        let providers = self.providers();
        if preset(name).is_some_and(|p| p.api == ApiKind::Local) {
            return true;
        }
        let named = self
            .operator_models()
            .iter()
            .any(|written| providers.parse_model(written).0.as_deref() == Some(name))
            || self.operator_provider() == Some(name);
        (named && providers.endpoint(name).is_ok()) || providers.is_ready(name)
    }

    /// The models a server's client may choose, each once: each enabled provider's default
    /// model and the models its table offers (`models`: an integration's), the operator's
    /// model and the config's default, every priced model and alias
    /// whose provider is enabled, and the embedded model when it is installed.
    pub fn allowed_targets(&self) -> Vec<Target> {
        let providers = self.providers();
        let mut written: Vec<String> = self.operator_models();
        for name in providers.names() {
            if !self.enabled(&name) {
                continue;
            }
            let default = providers.default_model_of(&name);
            written.extend(default.map(|model| format!("{name}/{model}")));
            let offered = providers.config.providers.get(&name).map(|c| c.models.as_slice());
            written
                .extend(offered.unwrap_or_default().iter().map(|model| format!("{name}/{model}")));
        }
        written.extend(providers.config.prices.keys().cloned());
        written.extend(providers.config.aliases.values().cloned());
        written.push(format!("local/{}", providers.default_local_model()));
        let mut allowed: Vec<Target> = Vec::new();
        for written in written {
            let Ok(target) = providers.resolve(Some(&written), None, &[]) else { continue };
            let usable = self.enabled(&target.endpoint.provider)
                && (target.endpoint.api != ApiKind::Local
                    || self.local_models().installed(&target).is_some());
            let seen = allowed.iter().any(|t| same(t, &target));
            if usable && !seen {
                allowed.push(target);
            }
        }
        allowed.sort_by_key(id);
        allowed
    }

    /// Refuses a client's `choice` that names a provider nobody enabled, before anything about
    /// that provider is looked at (its key, say).
    pub(crate) fn check_choice(&self, choice: &crate::Choice) -> Result<(), RunError> {
        let named = choice.provider.clone().or_else(|| {
            choice.model.as_deref().and_then(|model| self.providers().parse_model(model).0)
        });
        match named {
            Some(provider) if !self.enabled(&provider) => Err(RunError::NotAllowed {
                asked: choice.model.clone().unwrap_or(provider),
                allowed: self.allowed_targets().iter().map(id).collect(),
            }),
            _ => Ok(()),
        }
    }

    /// Refuses `target` unless this runtime may run it: its provider enabled and, when a
    /// client chose it (`chosen`), one of the allowed targets.
    pub(crate) fn check_allowed(&self, target: &Target, chosen: bool) -> Result<(), RunError> {
        let enabled = self.enabled(&target.endpoint.provider);
        if enabled && !chosen {
            return Ok(());
        }
        let allowed = self.allowed_targets();
        if enabled && allowed.iter().any(|t| same(t, target)) {
            return Ok(());
        }
        Err(RunError::NotAllowed { asked: id(target), allowed: allowed.iter().map(id).collect() })
    }

    /// `--model`, `LLMTOOL_MODEL` and the config's `default_model`, as written.
    fn operator_models(&self) -> Vec<String> {
        let providers = self.providers();
        let from_env = providers.env.get("LLMTOOL_MODEL").map(str::to_owned);
        self.operator_model()
            .map(str::to_owned)
            .into_iter()
            .chain(from_env)
            .chain(providers.config.default_model.clone())
            .collect()
    }
}

/// `provider/model`, as a run's `model` takes it.
pub(crate) fn id(target: &Target) -> String {
    format!("{}/{}", target.endpoint.provider, target.model)
}

fn same(a: &Target, b: &Target) -> bool {
    a.endpoint.provider == b.endpoint.provider && a.model == b.model
}
