//! llmtool's configuration file, `~/.config/llmtool/config.toml`, as data: providers, base
//! URLs, the default model, model aliases, prices, data-loss prevention, the rules `check`
//! reports and the team server's sign-in (SMTP, single sign-on); and the snapshot of
//! environment variables that resolving a model reads.
//!
//! This crate only reads and types the file. What the values mean is decided where they are
//! used: the provider clients turn a [`ProviderConfig`] into an endpoint and a [`Price`] into a
//! per-token price, the server sends mail and signs people in.

use std::collections::{BTreeMap, HashMap};
use std::num::NonZeroU32;

use serde::Deserialize;

/// The configuration file. Every part is optional.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Used when neither `--model`, `LLMTOOL_MODEL` nor the tool's `model_version` gives one.
    pub default_model: Option<String>,
    /// `name = "provider/model"`; overrides and extends the built-in family aliases.
    #[serde(default)]
    pub aliases: BTreeMap<String, String>,
    /// Settings for a known provider, or a new provider of one of the APIs.
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderConfig>,
    /// Prices in US dollars per million tokens, by `provider/model`.
    #[serde(default)]
    pub prices: BTreeMap<String, Price>,
    /// Added on top of every price (the table's and `prices`' without a markup of their own),
    /// in percent: `15` bills a model 15% over its price.
    pub markup_percent: Option<f64>,
    /// Whether a tool file may name a model file (`local:PATH`); off unless the user says so.
    #[serde(default)]
    pub allow_local_paths: bool,
    /// The tool library's URL (`llmtool serve`), when `--registry` and `LLMTOOL_REGISTRY`
    /// name none (`llmtool login` writes it).
    pub registry: Option<String>,
    /// The token sent to `registry` (and to no other library) when `LLMTOOL_TOKEN` is not
    /// set (`llmtool login` writes it; the file is then readable by its owner only).
    pub registry_token: Option<String>,
    /// Data-loss prevention: the policy of runs, and what to look for (docs/dlp.md).
    #[serde(default)]
    pub dlp: llmtool_dlp::Config,
    /// Which rules `llmtool check` reports.
    #[serde(default)]
    pub check: CheckConfig,
    /// The library server's sign-in: its address, its mail, its single sign-on.
    #[serde(default)]
    pub server: ServerConfig,
    /// The databases a tool's `query_database` may read, by name (`[databases.shop]`).
    #[serde(default)]
    pub databases: BTreeMap<String, DatabaseConfig>,
    /// What `fetch_url` may reach (`[fetch]`).
    #[serde(default)]
    pub fetch: FetchConfig,
    /// The search engine of `web_search` (`[search]`).
    pub search: Option<SearchConfig>,
    /// MCP servers whose functions tools may offer (`[mcp_servers.NAME]`): started or reached
    /// only as configured here, never because a tool file asked.
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
}

/// A `[mcp_servers.NAME]` table: a server over stdio (`command`) or Streamable HTTP (`url`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// The program and its arguments, started for a run that uses the server.
    #[serde(default)]
    pub command: Vec<String>,
    /// Its environment (nothing else of llmtool's is passed on but `PATH`).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// A Streamable HTTP server's address.
    pub url: Option<String>,
    /// The environment variable that holds a bearer token for `url`.
    pub token_env: Option<String>,
}

/// A `[databases.NAME]` table: a database `query_database` reads (see docs/functions.md).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseConfig {
    /// `postgres://...` or `sqlite:PATH`; a password in it is never shown.
    pub url: Option<String>,
    /// The environment variable that holds the URL instead (it may carry a password).
    pub url_env: Option<String>,
    /// The most rows one query gives the model.
    pub max_rows: Option<u32>,
    /// How long one query may run, in seconds.
    pub timeout_seconds: Option<u32>,
}

/// The `[fetch]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FetchConfig {
    /// Hosts and addresses `fetch_url` may reach although they are private, loopback or
    /// link-local (`"127.0.0.1"`, `"intranet.example"`); none by default.
    #[serde(default)]
    pub allow: Vec<String>,
}

/// The `[search]` table: which engine answers `web_search`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchConfig {
    /// `searxng`, `brave` or `tavily`.
    pub engine: String,
    /// The engine's address: a `SearXNG` instance's; the others' own unless given.
    pub url: Option<String>,
    /// The environment variable that holds the engine's key (Brave, Tavily).
    pub key_env: Option<String>,
}

/// The `[server]` table of `llmtool serve` (and of `llmtool member invite`, which sends its
/// mail): see docs/teams.md.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// The address people reach the studio at (`https://tools.example.com`), for the links of
    /// invites and the single sign-on's redirect; `--public-url` overrides it.
    pub public_url: Option<String>,
    /// The SMTP server that invites are sent through.
    pub smtp: Option<SmtpConfig>,
    /// OpenID Connect single sign-on for the studio.
    pub sso: Option<SsoConfig>,
}

/// How a connection to the SMTP server is protected.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SmtpSecurity {
    /// TLS from the first byte (usually port 465).
    Tls,
    /// Plain text, then `STARTTLS`, which must succeed (usually port 587).
    #[default]
    Starttls,
    /// No encryption at all: only for a server on this machine (`127.0.0.1`, `localhost`).
    None,
}

/// The `[server.smtp]` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmtpConfig {
    pub host: String,
    /// 465 for `tls`, 587 for `starttls`, 25 for `none` unless given.
    pub port: Option<u16>,
    #[serde(default)]
    pub security: SmtpSecurity,
    /// The user name to authenticate with (none: no authentication).
    pub username: Option<String>,
    /// The environment variable that holds the password.
    pub password_env: Option<String>,
    /// A file that holds the password (its first line).
    pub password_file: Option<String>,
    /// The sender, as `Name <address>` or `address`.
    pub from: String,
    /// A PEM file of certificates to trust besides the system's (a company's own CA).
    pub ca_file: Option<String>,
}

/// A secret of the server's (an SMTP password, a client secret): the first line of `file`,
/// else the value of the environment variable `env`; `None` when neither is given. `what`
/// names it in errors, which never include the secret.
pub fn read_secret(
    env: Option<&str>,
    file: Option<&str>,
    what: &str,
) -> Result<Option<String>, ConfigError> {
    if let Some(file) = file {
        let text = std::fs::read_to_string(file)
            .map_err(|e| ConfigError(format!("cannot read {what} from `{file}`: {e}")))?;
        let line = text.lines().next().unwrap_or_default().trim().to_owned();
        if line.is_empty() {
            return Err(ConfigError(format!("`{file}` holds no {what}")));
        }
        return Ok(Some(line));
    }
    match env {
        Some(name) => match std::env::var(name) {
            Ok(value) if !value.trim().is_empty() => Ok(Some(value.trim().to_owned())),
            _ => Err(ConfigError(format!(
                "the environment variable `{name}` (the {what}) is not set"
            ))),
        },
        None => Ok(None),
    }
}

/// The `[server.sso]` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SsoConfig {
    /// The OpenID provider's issuer URL (its discovery document is under
    /// `/.well-known/openid-configuration`).
    pub issuer: String,
    pub client_id: String,
    /// The environment variable that holds the client secret.
    pub client_secret_env: Option<String>,
    /// A file that holds the client secret (its first line).
    pub client_secret_file: Option<String>,
    /// Members are made on their first sign-in when their e-mail (verified by the provider)
    /// is at one of these domains; no domain: only existing members sign in.
    #[serde(default)]
    pub allowed_domains: Vec<String>,
    /// The role of members made on their first sign-in (`viewer` unless given).
    pub default_role: Option<String>,
    /// Believe the e-mail of a provider that does not say whether it verified it (one that
    /// never sends `email_verified`); an address it says it did not verify is never believed.
    #[serde(default)]
    pub trust_unverified_email: bool,
    /// A PEM file of certificates to trust besides the system's, for the provider.
    pub ca_file: Option<String>,
}

/// The `[check]` table: rules selected and ignored, as `check --select` and `--ignore` take
/// them (a code, a prefix of codes, or a rule's name); the flags add to these.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckConfig {
    #[serde(default)]
    pub select: Vec<String>,
    #[serde(default)]
    pub ignore: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// The API a new provider speaks (`openai`, `anthropic`, `gemini`, `vertex`).
    pub api: Option<ApiName>,
    pub base_url: Option<String>,
    /// The environment variable holding the key (instead of the preset's).
    pub api_key_env: Option<String>,
    /// Shown in messages.
    pub display_name: Option<String>,
    /// The model run when this provider is chosen and no model it serves is named.
    pub default_model: Option<String>,
    /// The models this provider offers besides its default: a server's clients may choose any
    /// of them (`GET /models` lists them), as they may its default.
    #[serde(default)]
    pub models: Vec<String>,
    /// OpenAI-protocol servers: whether structured output (`json_schema`) is supported.
    pub json_schema: Option<bool>,
    /// OpenAI-protocol servers: whether the penalties are supported.
    pub penalties: Option<bool>,
    /// Vertex AI: the Google Cloud project and location.
    pub project: Option<String>,
    pub location: Option<String>,
    /// Requests at once, at most (by default, as many as asked until the provider answers
    /// 429; then fewer, found by trying).
    pub max_concurrency: Option<NonZeroU32>,
    /// The account's limits, as the provider states them.
    pub requests_per_minute: Option<NonZeroU32>,
    pub tokens_per_minute: Option<NonZeroU32>,
}

/// An API named in the config file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApiName {
    Openai,
    Anthropic,
    Gemini,
    Vertex,
}

/// A model's price in the config file, in US dollars per million tokens (as providers list
/// them); the classes left out are billed as their parent class.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    pub cached_input: Option<f64>,
    pub cache_write: Option<f64>,
    pub reasoning: Option<f64>,
    pub batch_input: Option<f64>,
    pub batch_output: Option<f64>,
    /// The longest prompt the model takes, in tokens (its context window's input side).
    pub max_input: Option<u64>,
    /// Added on top of this price, in percent (over the config's `markup_percent`).
    pub markup_percent: Option<f64>,
    /// An image model's picture tokens, per million (else they are billed as `output`).
    pub image_output: Option<f64>,
    /// US dollars per picture (not per million): an image tool's run whose answer counts no
    /// output tokens is billed by its pictures.
    pub per_image: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the configuration file is not valid: {0}")]
pub struct ConfigError(pub String);

impl Config {
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError(e.to_string()))
    }
}

/// The environment variables resolution reads, captured once (so tests can supply their own).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    vars: HashMap<String, String>,
}

impl Env {
    pub fn from_process() -> Self {
        Self { vars: std::env::vars().collect() }
    }

    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        Self { vars: pairs.into_iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect() }
    }

    /// The same, with `name` set to `value`.
    #[must_use]
    pub fn with(mut self, name: &str, value: &str) -> Self {
        self.vars.insert(name.to_owned(), value.to_owned());
        self
    }

    /// The variable's value, if set and not empty.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str).filter(|v| !v.trim().is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_section_and_rejects_typos() {
        let config = Config::parse(
            r#"
            default_model = "groq/llama-3.3-70b-versatile"
            [aliases]
            fast = "groq/llama-3.1-8b-instant"
            [providers.work]
            api = "openai"
            base_url = "http://127.0.0.1:9000/v1"
            api_key_env = "WORK_KEY"
            json_schema = true
            [prices."openai/gpt-4o-mini"]
            input = 0.15
            output = 0.6
            "#,
        )
        .unwrap();
        assert_eq!(config.providers["work"].api, Some(ApiName::Openai));
        assert_eq!(config.providers["work"].api_key_env.as_deref(), Some("WORK_KEY"));
        assert!(Config::parse("default_modle = 'x'").unwrap_err().0.contains("default_modle"));
    }
}
