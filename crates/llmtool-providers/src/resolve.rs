//! Choosing the provider and model for a run, and building its [`Endpoint`].
//!
//! Order: `--model` (or `LLMTOOL_MODEL`), then the tool's `model_version` list (the first model a
//! configured provider can serve), then the config file's `default_model`. A model is written
//! `provider/model`, or bare and matched to a provider by its prefix (`claude-` is Anthropic),
//! after alias expansion (`gpt-4` stands for a current OpenAI model).

use serde::Serialize;

use crate::endpoint::{ApiKind, Endpoint, Features};
use crate::error::ProviderError;
use crate::presets::{DEFAULT_ALIASES, PRESETS, Preset, preset};
use crate::redact::Redactor;
use llmtool_config::{Config, Env};

/// The model the `local` provider runs when none is named: the smallest of the catalog that
/// answers general questions right (docs/local-model.md has the measurements).
pub const DEFAULT_LOCAL_MODEL: &str = "smollm2";

/// Names another catalog model as the `local` provider's default (the test command runs its
/// tests on the smaller `smollm2` this way).
pub const LOCAL_MODEL_VARIABLE: &str = "LLMTOOL_LOCAL_MODEL";

/// The providers as configured: presets, the config file and the environment.
#[derive(Debug, Clone, Default)]
pub struct Providers {
    pub config: Config,
    pub env: Env,
}

/// A chosen model and where to send it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub endpoint: Endpoint,
    /// The model name as the provider knows it.
    pub model: String,
    /// Who named the model: a tool file may not name a model file unless the user allows it.
    pub origin: ModelOrigin,
    /// Said on standard error when the model is not the one asked for.
    pub note: Option<String>,
}

/// Where the model of a run came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelOrigin {
    /// `--model` or `LLMTOOL_MODEL`.
    User,
    /// The tool's `model_version` list.
    Tool,
    /// The config file's `default_model`.
    Config,
    /// The chosen provider's default model (or the embedded local model).
    Default,
}

impl Target {
    /// A target for `model` on `endpoint`, named by the user.
    pub fn new(endpoint: Endpoint, model: impl Into<String>) -> Self {
        Self { endpoint, model: model.into(), origin: ModelOrigin::User, note: None }
    }
}

/// Whether `endpoint` can serve `model` (whose provider, told by its name, is `owner`). The
/// local provider serves its known model and `.gguf` files; another provider serves every
/// model whose name does not belong to a different provider.
fn serves(endpoint: &Endpoint, owner: Option<&str>, model: &str, local_default: &str) -> bool {
    if endpoint.api == ApiKind::Local {
        let is_file =
            std::path::Path::new(model).extension().is_some_and(|e| e.eq_ignore_ascii_case("gguf"));
        return owner == Some("local") || model.eq_ignore_ascii_case(local_default) || is_file;
    }
    owner.is_none_or(|owner| owner.eq_ignore_ascii_case(&endpoint.provider))
}

/// One line of `llmtool providers`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProviderStatus {
    pub name: String,
    pub display: String,
    pub api: ApiKind,
    pub base_url: String,
    /// The variable the key comes from, if the provider needs one.
    pub key_variable: Option<String>,
    /// Whether a key is set (or none is needed and the provider is configured).
    pub ready: bool,
}

impl Providers {
    pub fn new(config: Config, env: Env) -> Self {
        Self { config, env }
    }

    /// Every known provider name: presets, then providers only in the config file.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = PRESETS.iter().map(|p| p.name.to_owned()).collect();
        names.extend(self.config.providers.keys().filter(|k| preset(k).is_none()).cloned());
        names
    }

    fn knows(&self, name: &str) -> bool {
        preset(name).is_some() || self.config.providers.contains_key(name)
    }

    /// The endpoint of provider `name`; errors if it is unknown or its key is missing.
    pub fn endpoint(&self, name: &str) -> Result<Endpoint, ProviderError> {
        let (endpoint, key_required) = self.endpoint_unchecked(name)?;
        if key_required && endpoint.api_key.is_none() {
            let variable = endpoint.key_variable.clone().unwrap_or_default();
            return Err(ProviderError::MissingKey { provider: endpoint.display, variable });
        }
        if endpoint.api == ApiKind::Vertex && endpoint.vertex_path.is_none() {
            return Err(ProviderError::MissingKey {
                provider: endpoint.display,
                variable: "GOOGLE_CLOUD_PROJECT".into(),
            });
        }
        Ok(endpoint)
    }

    fn endpoint_unchecked(&self, name: &str) -> Result<(Endpoint, bool), ProviderError> {
        let preset = preset(name);
        let config = self.config.providers.get(name).cloned().unwrap_or_default();
        let Some(api) = config.api.map(ApiKind::from).or(preset.map(|p| p.api)) else {
            return Err(ProviderError::UnknownModel {
                model: name.to_owned(),
                help: format!(
                    "no provider is called `{name}`; known: {}; or add it under [providers.{name}] with `api` and `base_url` in the config file",
                    self.names().join(", ")
                ),
            });
        };
        let key_variable = config.api_key_env.clone().or_else(|| {
            preset
                .and_then(|p| {
                    p.key_variables
                        .iter()
                        .find(|v| self.env.get(v).is_some())
                        .or(p.key_variables.first())
                })
                .map(|v| (*v).to_owned())
        });
        let api_key = key_variable.as_deref().and_then(|v| self.env.get(v)).map(str::to_owned);
        let key_required = config.api_key_env.is_some() || preset.is_some_and(|p| !p.is_local());
        let mut base_url = preset
            .and_then(|p| p.base_url_variable)
            .and_then(|v| self.env.get(v))
            .map(str::to_owned)
            .or(config.base_url.clone())
            .or(preset.map(|p| p.base_url.to_owned()))
            .ok_or_else(|| ProviderError::UnknownModel {
                model: name.to_owned(),
                help: format!("[providers.{name}] in the config file needs a `base_url`"),
            })?;
        let mut vertex_path = None;
        if api == ApiKind::Vertex {
            let location = config
                .location
                .clone()
                .or(self.env.get("GOOGLE_CLOUD_LOCATION").map(str::to_owned))
                .unwrap_or_else(|| "us-central1".into());
            let project =
                config.project.clone().or(self.env.get("GOOGLE_CLOUD_PROJECT").map(str::to_owned));
            base_url = base_url.replace("{location}", &location);
            // Without a project the endpoint can be listed but not used (see `endpoint`).
            vertex_path = project.map(|project| format!("projects/{project}/locations/{location}"));
        }
        let mut features = preset.map_or(Features::COMPATIBLE, |p| p.features);
        if let Some(json_schema) = config.json_schema {
            features.json_schema = json_schema;
        }
        if let Some(penalties) = config.penalties {
            features.penalties = penalties;
        }
        let display = config
            .display_name
            .clone()
            .or(preset.map(|p| p.display.to_owned()))
            .unwrap_or_else(|| name.to_owned());
        let endpoint = Endpoint {
            provider: name.to_owned(),
            display,
            api,
            base_url,
            api_key,
            key_variable,
            features,
            vertex_path,
        };
        Ok((endpoint, key_required))
    }

    /// Whether `name` can be used without further set-up: its key is set, or (for a local
    /// server) it is configured in the file or by its base-URL variable.
    pub fn is_ready(&self, name: &str) -> bool {
        match preset(name) {
            // The local model is always usable: it is pulled on first use.
            Some(p) if p.api == ApiKind::Local => true,
            Some(p) if p.is_local() => self.config.providers.contains_key(name),
            Some(_) => self.endpoint(name).is_ok(),
            None => self.config.providers.contains_key(name) && self.endpoint(name).is_ok(),
        }
    }

    /// Every provider and whether it is ready, for `llmtool providers`.
    pub fn statuses(&self) -> Vec<ProviderStatus> {
        self.names()
            .into_iter()
            .filter_map(|name| {
                let (endpoint, _) = self.endpoint_unchecked(&name).ok()?;
                Some(ProviderStatus {
                    ready: self.is_ready(&name),
                    display: endpoint.display,
                    api: endpoint.api,
                    base_url: crate::http::redact_url(&endpoint.base_url),
                    key_variable: endpoint.key_variable,
                    name,
                })
            })
            .collect()
    }

    /// The model the `local` provider runs when none is named: `LLMTOOL_LOCAL_MODEL`, else
    /// [`DEFAULT_LOCAL_MODEL`]. Every path that needs it asks here.
    pub fn default_local_model(&self) -> &str {
        self.env.get(LOCAL_MODEL_VARIABLE).map_or(DEFAULT_LOCAL_MODEL, str::trim)
    }

    /// The model `provider` runs when none is named: its config's `default_model`, else its
    /// preset's (the local provider's is [`Providers::default_local_model`]).
    pub fn default_model_of(&self, provider: &str) -> Option<String> {
        let configured = self.config.providers.get(provider).and_then(|c| c.default_model.clone());
        configured.or_else(|| {
            let preset = preset(provider)?;
            if preset.api == ApiKind::Local {
                return Some(self.default_local_model().to_owned());
            }
            preset.default_model.map(str::to_owned)
        })
    }

    /// `(provider, model)` for a model name: aliases expanded, `provider/` split off, or the
    /// provider found by the model's prefix.
    pub fn parse_model(&self, written: &str) -> (Option<String>, String) {
        let written = written.trim();
        if let Some(path) = written.strip_prefix("local:") {
            return (Some("local".into()), path.to_owned());
        }
        if written.eq_ignore_ascii_case("local") {
            return (Some("local".into()), self.default_local_model().into());
        }
        let expanded = self
            .config
            .aliases
            .get(written)
            .map(String::as_str)
            .or_else(|| {
                DEFAULT_ALIASES
                    .iter()
                    .find(|(alias, _)| alias.eq_ignore_ascii_case(written))
                    .map(|(_, target)| *target)
            })
            .unwrap_or(written);
        if let Some((provider, model)) = expanded.split_once('/')
            && self.knows(provider)
        {
            return (Some(provider.to_ascii_lowercase()), model.to_owned());
        }
        let lowered = expanded.to_ascii_lowercase();
        let by_prefix = PRESETS
            .iter()
            .find(|p: &&Preset| p.model_prefixes.iter().any(|prefix| lowered.starts_with(prefix)));
        (by_prefix.map(|p| p.name.to_owned()), expanded.to_owned())
    }

    /// Chooses the target of a run (see the module documentation for the order). With a
    /// provider named (`provider_flag`), the model is the first one named that this provider
    /// can serve; if none is, the provider's default model, with a note saying so.
    pub fn resolve(
        &self,
        model_flag: Option<&str>,
        provider_flag: Option<&str>,
        tool_models: &[&str],
    ) -> Result<Target, ProviderError> {
        let explicit = model_flag.or_else(|| self.env.get("LLMTOOL_MODEL"));
        let mut candidates: Vec<(&str, ModelOrigin)> = Vec::new();
        if let Some(written) = explicit {
            candidates.push((written, ModelOrigin::User));
        } else {
            candidates.extend(tool_models.iter().map(|m| (*m, ModelOrigin::Tool)));
            if let Some(default) = &self.config.default_model {
                candidates.push((default, ModelOrigin::Config));
            }
        }
        match provider_flag {
            Some(provider) => self.target_on(provider, &candidates),
            None => self.target_of_first_ready(&candidates),
        }
    }

    /// Without a provider named: the user's model, else the first model of the tool's list
    /// whose provider is ready, else the config's default, else the embedded local model.
    fn target_of_first_ready(
        &self,
        candidates: &[(&str, ModelOrigin)],
    ) -> Result<Target, ProviderError> {
        // The tool's models passed over, each with why: said when the local model runs instead.
        let mut passed_over = Vec::new();
        for &(written, origin) in candidates {
            let (provider, model) = self.parse_model(written);
            let Some(provider) = provider else {
                if origin == ModelOrigin::Tool {
                    passed_over.push(format!("`{written}` (no provider is known for it)"));
                    continue;
                }
                let help = match written.split_once('/') {
                    // Written as `provider/model`, with a provider llmtool does not know.
                    Some((prefix, _)) if !prefix.is_empty() => format!(
                        "no provider is called `{prefix}`; known: {}; a model whose own name has a `/` (as on OpenRouter or Together) needs `--provider`",
                        self.names().join(", ")
                    ),
                    _ => "cannot tell which provider serves it; write it as `provider/model` or pass `--provider`".into(),
                };
                return Err(ProviderError::UnknownModel { model: written.to_owned(), help });
            };
            if origin != ModelOrigin::Tool || self.is_ready(&provider) {
                return Ok(Target {
                    endpoint: self.endpoint(&provider)?,
                    model,
                    origin,
                    note: None,
                });
            }
            passed_over.push(match self.endpoint(&provider) {
                Err(ProviderError::MissingKey { variable, .. }) => {
                    format!("`{written}` ({provider}: {variable} is not set)")
                }
                _ => format!("`{written}` ({provider} is not ready)"),
            });
        }
        // Nothing else is configured: the embedded local model, which needs no key; a tool
        // that named other models is told why they were passed over.
        let local = self.default_local_model();
        let note = (!passed_over.is_empty()).then(|| {
            format!(
                "the tool's models cannot run here: {}; running the embedded local model `{local}` instead (set the key, or pass `--model`; `llmtool providers` shows what is ready)",
                passed_over.join(", ")
            )
        });
        Ok(Target {
            endpoint: self.endpoint("local")?,
            model: local.into(),
            origin: ModelOrigin::Default,
            note,
        })
    }

    /// On the provider the user named: the first candidate it can serve, else its default.
    fn target_on(
        &self,
        provider: &str,
        candidates: &[(&str, ModelOrigin)],
    ) -> Result<Target, ProviderError> {
        let endpoint = self.endpoint(provider)?;
        for &(written, origin) in candidates {
            let (owner, model) = self.parse_model(written);
            if serves(&endpoint, owner.as_deref(), &model, self.default_local_model()) {
                return Ok(Target { endpoint, model, origin, note: None });
            }
        }
        // A model the user named is never replaced by another.
        if let Some(&(written, ModelOrigin::User)) = candidates.first() {
            return Err(ProviderError::UnknownModel {
                model: written.to_owned(),
                help: format!(
                    "{} cannot serve it; name a model it serves, or drop `--provider`",
                    endpoint.display
                ),
            });
        }
        let first = candidates.first().map(|(written, _)| *written);
        let default = self.default_model_of(&endpoint.provider);
        match (default, first) {
            (Some(model), first) => {
                let note = first.map(|written| {
                    format!(
                        "{} cannot serve `{written}`; running its default model `{model}` instead",
                        endpoint.display
                    )
                });
                Ok(Target { endpoint, model, origin: ModelOrigin::Default, note })
            }
            // A provider with no known default (a router, a self-hosted server): send the name
            // as written, since such servers often take other providers' names.
            (None, Some(written)) => {
                let origin = candidates[0].1;
                Ok(Target { endpoint, model: written.trim().to_owned(), origin, note: None })
            }
            (None, None) => Err(ProviderError::NoModel(format!(
                "{} has no default model; name one with `--model`",
                endpoint.display
            ))),
        }
    }

    /// Everything that hides the configured secrets: the value of every key variable a
    /// provider reads (presets and the config file), and the MCP server's token.
    pub fn redactor(&self) -> Redactor {
        let preset_variables = PRESETS.iter().flat_map(|p| p.key_variables.iter().copied());
        let config_variables =
            self.config.providers.values().filter_map(|c| c.api_key_env.as_deref());
        let values = preset_variables
            .chain(config_variables)
            .chain(["LLMTOOL_MCP_TOKEN", "LLMTOOL_TOKEN"])
            .filter_map(|variable| self.env.get(variable))
            .map(str::to_owned);
        Redactor::new(values)
    }

    /// The prices: the built-in table, with the config file's over it.
    pub fn price_table(&self) -> crate::pricing::PriceTable {
        let markup = self.config.markup_percent;
        let overrides =
            self.config.prices.iter().map(|(key, price)| {
                (key.clone(), crate::pricing::Price::from_config(price, markup))
            });
        crate::pricing::PriceTable::new(overrides.collect()).with_markup(markup)
    }

    /// The price of the target's model, or `None` when it is unpriced (see
    /// [`crate::pricing::table`]); the embedded model is free.
    pub fn price(&self, target: &Target) -> Option<crate::pricing::PriceEntry> {
        if target.endpoint.api == ApiKind::Local {
            return Some(crate::pricing::PriceEntry::local(&target.model));
        }
        self.price_table().lookup(&target.endpoint.provider, &target.model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn providers(env: &[(&str, &str)], config: &str) -> Providers {
        Providers::new(Config::parse(config).unwrap(), Env::from_pairs(env.iter().copied()))
    }

    #[test]
    fn the_servers_tokens_are_secrets_too() {
        let p = providers(
            &[("LLMTOOL_TOKEN", "llmt_registry_1"), ("LLMTOOL_MCP_TOKEN", "mcp_secret_22")],
            "",
        );
        let shown = p.redactor().redact("llmt_registry_1 and mcp_secret_22").into_owned();
        assert_eq!(shown, "[redacted] and [redacted]");
    }

    #[test]
    fn flag_wins_and_prefixes_pick_the_provider() {
        let p = providers(&[("ANTHROPIC_API_KEY", "a"), ("OPENAI_API_KEY", "o")], "");
        let target = p.resolve(Some("claude-sonnet-4-5"), None, &["gpt-4o"]).unwrap();
        assert_eq!(
            (target.endpoint.provider.as_str(), target.model.as_str()),
            ("anthropic", "claude-sonnet-4-5")
        );
        let target = p.resolve(Some("openai/gpt-4o-mini"), None, &[]).unwrap();
        assert_eq!(target.endpoint.api_key.as_deref(), Some("o"));
    }

    #[test]
    fn the_tools_list_is_tried_in_order_of_configured_providers() {
        let p = providers(&[("GEMINI_API_KEY", "g")], "");
        let target =
            p.resolve(None, None, &["gpt-4o", "claude-sonnet-4", "gemini-2.5-flash"]).unwrap();
        assert_eq!(target.endpoint.provider, "gemini");
        assert_eq!(target.model, "gemini-2.5-flash");
    }

    #[test]
    fn family_aliases_and_config_aliases() {
        let p = providers(&[("OPENAI_API_KEY", "o")], "[aliases]\ngpt-4 = \"openai/gpt-4.1\"");
        assert_eq!(p.resolve(None, None, &["gpt-4"]).unwrap().model, "gpt-4.1");
        assert_eq!(p.parse_model("gpt-3.5"), (Some("openai".into()), "gpt-4o-mini".into()));
        assert_eq!(p.parse_model("chat-bison").0.as_deref(), Some("gemini"));
    }

    #[test]
    fn env_model_base_url_overrides_and_missing_keys() {
        let p = providers(
            &[
                ("LLMTOOL_MODEL", "anthropic/claude-haiku-4-5"),
                ("ANTHROPIC_BASE_URL", "http://127.0.0.1:4000"),
            ],
            "",
        );
        let error = p.resolve(None, None, &[]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "no API key for Anthropic: set the environment variable `ANTHROPIC_API_KEY`"
        );
        let p = providers(
            &[("ANTHROPIC_API_KEY", "k"), ("ANTHROPIC_BASE_URL", "http://127.0.0.1:4000")],
            "",
        );
        assert_eq!(p.endpoint("anthropic").unwrap().base_url, "http://127.0.0.1:4000");
    }

    #[test]
    fn local_servers_and_config_providers() {
        let p = providers(
            &[],
            "default_model = \"ollama/llama3.2\"\n[providers.ollama]\n[providers.work]\napi = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"",
        );
        let target = p.resolve(None, None, &["gpt-4o"]).unwrap();
        assert_eq!(
            (target.endpoint.provider.as_str(), target.endpoint.api_key.is_none()),
            ("ollama", true)
        );
        assert_eq!(
            p.resolve(Some("work/my-model"), None, &[]).unwrap().endpoint.base_url,
            "http://127.0.0.1:9/v1"
        );
        assert!(
            p.resolve(Some("mystery-model"), None, &[])
                .unwrap_err()
                .to_string()
                .contains("provider/model")
        );
        assert!(matches!(
            p.resolve(Some("nope/x"), Some("nope"), &[]),
            Err(ProviderError::UnknownModel { .. })
        ));
    }

    #[test]
    fn nothing_configured_means_the_local_model() {
        let target = providers(&[], "").resolve(None, None, &["gpt-4o"]).unwrap();
        assert_eq!(
            (target.endpoint.provider.as_str(), target.model.as_str()),
            ("local", "smollm2")
        );
        let p = providers(&[], "");
        assert_eq!(
            p.parse_model("local:/models/x.gguf"),
            (Some("local".into()), "/models/x.gguf".into())
        );
        assert_eq!(p.resolve(Some("local"), None, &[]).unwrap().model, "smollm2");
    }

    #[test]
    fn a_named_provider_runs_what_it_can_serve_or_its_default_with_a_note() {
        let p = providers(&[("ANTHROPIC_API_KEY", "a"), ("OPENAI_API_KEY", "o")], "");
        let local = p.resolve(None, Some("local"), &["gpt-4o-mini"]).unwrap();
        assert_eq!((local.model.as_str(), local.origin), ("smollm2", ModelOrigin::Default));
        assert_eq!(
            local.note.as_deref(),
            Some(
                "local model cannot serve `gpt-4o-mini`; running its default model `smollm2` instead"
            )
        );
        let named = p.resolve(None, Some("anthropic"), &["gpt-4o", "claude-sonnet-4-5"]).unwrap();
        assert_eq!((named.model.as_str(), named.note), ("claude-sonnet-4-5", None));
        // A model the user named is never swapped for the provider's default.
        let named = p.resolve(Some("claude-opus-4-1"), Some("openai"), &[]).unwrap_err();
        assert!(matches!(named, ProviderError::UnknownModel { .. }), "{named}");
        assert!(named.to_string().contains("claude-opus-4-1"), "{named}");
        let unprefixed = p.resolve(None, Some("ollama"), &["llama3.2"]).unwrap();
        assert_eq!((unprefixed.model.as_str(), unprefixed.origin), ("llama3.2", ModelOrigin::Tool));
        assert!(matches!(p.resolve(None, Some("vllm"), &[]), Err(ProviderError::NoModel(_))));
    }

    #[test]
    fn the_local_model_running_instead_of_the_tools_says_why() {
        let p = providers(&[], "");
        let target = p.resolve(None, None, &["gpt-4o-mini", "mystery-model"]).unwrap();
        assert_eq!(
            (target.endpoint.provider.as_str(), target.model.as_str()),
            ("local", "smollm2")
        );
        let note = target.note.unwrap();
        assert!(note.contains("`gpt-4o-mini` (openai: OPENAI_API_KEY is not set)"), "{note}");
        assert!(note.contains("`mystery-model` (no provider is known for it)"), "{note}");
        assert!(note.contains("llmtool providers"), "{note}");
        // A tool that names no model runs there with nothing to say.
        assert_eq!(p.resolve(None, None, &[]).unwrap().note, None);
    }

    #[test]
    fn a_model_file_named_by_a_tool_is_marked_as_the_tools() {
        let p = providers(&[], "");
        let target = p.resolve(None, None, &["local:/etc/passwd"]).unwrap();
        assert_eq!((target.model.as_str(), target.origin), ("/etc/passwd", ModelOrigin::Tool));
        let target = p.resolve(Some("local:/m/x.gguf"), None, &[]).unwrap();
        assert_eq!(target.origin, ModelOrigin::User);
        let target = p.resolve(None, Some("local"), &["local:/m/x.gguf"]).unwrap();
        assert_eq!(target.origin, ModelOrigin::Tool);
    }

    #[test]
    fn every_api_is_listed_even_before_it_is_configured() {
        let statuses = providers(&[], "").statuses();
        let vertex = statuses.iter().find(|s| s.name == "vertex").unwrap();
        assert!(!vertex.ready);
        assert_eq!(vertex.api, ApiKind::Vertex);
        for api in
            [ApiKind::OpenAi, ApiKind::Anthropic, ApiKind::Gemini, ApiKind::Vertex, ApiKind::Local]
        {
            assert!(statuses.iter().any(|s| s.api == api), "{api:?} is missing");
        }
        let p = providers(&[("GOOGLE_CLOUD_ACCESS_TOKEN", "t"), ("GOOGLE_CLOUD_PROJECT", "p")], "");
        assert!(p.is_ready("vertex"));
    }

    #[test]
    fn a_markup_raises_the_tables_prices_and_the_configs_without_their_own() {
        let plain = providers(&[], "");
        let marked = providers(
            &[],
            "markup_percent = 10\n[prices.\"acme/m\"]\ninput = 1.0\noutput = 2.0\n[prices.\"acme/n\"]\ninput = 1.0\noutput = 2.0\nmarkup_percent = 0\n",
        );
        let price = |p: &Providers, provider: &str, model: &str| {
            p.price_table().lookup(provider, model).unwrap()
        };
        let base = price(&plain, "openai", "gpt-4o-mini");
        let raised = price(&marked, "openai", "gpt-4o-mini");
        assert!((raised.price.input - base.price.input * 1.1).abs() < 1e-15);
        assert!(raised.source.ends_with("+ 10% markup"), "{}", raised.source);
        assert!((price(&marked, "acme", "m").price.output - 2.2e-6).abs() < 1e-15);
        assert!((price(&marked, "acme", "n").price.output - 2e-6).abs() < 1e-15);
    }
}
