//! A client of the tool library's HTTP API (`llmtool serve`), for the CLI (`publish`, `search`, `pull`, `run
//! registry:`), with a cache of the versions it pulled, so that a tool pulled once still runs
//! when the registry cannot be reached.

use std::path::PathBuf;

use llmtool_registry::{Page, Published};
use serde::Deserialize;

/// A reference to a tool in the library: `SLUG`, `SLUG@VERSION` or `SLUG:LABEL`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reference {
    pub(crate) slug: String,
    pub(crate) version: Option<u32>,
    pub(crate) label: Option<String>,
}

impl Reference {
    pub(crate) fn parse(text: &str) -> Option<Reference> {
        let (slug, version, label) = match (text.split_once('@'), text.split_once(':')) {
            (Some((slug, number)), None) => (slug, Some(number.parse().ok()?), None),
            (None, Some((slug, label))) => (slug, None, Some(label.to_owned())),
            (None, None) => (text, None, None),
            _ => return None,
        };
        llmtool_registry::is_slug(slug).then(|| Reference { slug: slug.to_owned(), version, label })
    }

    /// The cache's name for what this reference points at now.
    fn pointer(&self) -> String {
        match (&self.version, &self.label) {
            (Some(number), _) => format!("{}@{number}", self.slug),
            (None, Some(label)) => format!("{}:{label}", self.slug),
            (None, None) => format!("{}:latest", self.slug),
        }
    }
}

impl std::fmt::Display for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.version, &self.label) {
            (Some(number), _) => write!(f, "{}@{number}", self.slug),
            (None, Some(label)) => write!(f, "{}:{label}", self.slug),
            (None, None) => f.write_str(&self.slug),
        }
    }
}

/// Why a request to the library failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ClientError {
    /// The library could not be reached, or did not answer.
    #[error("the library at {url} cannot be reached: {reason}")]
    Unreachable { url: String, reason: String },
    /// The library answered with a problem document.
    #[error("{title}: {detail}")]
    Refused {
        status: u16,
        title: String,
        detail: String,
        /// A refused tool file's diagnostics (as `check --format json` gives them).
        diagnostics: Vec<serde_json::Value>,
    },
    #[error("the library's answer is not what its API says: {0}")]
    Unexpected(String),
}

#[derive(Debug, Deserialize)]
struct ProblemBody {
    title: String,
    detail: String,
    #[serde(default)]
    diagnostics: Vec<serde_json::Value>,
}

/// A version as pulled: its number and the tool file's canonical text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pulled {
    pub(crate) slug: String,
    pub(crate) version: u32,
    pub(crate) text: String,
    /// Whether it came from the cache because the library could not be reached.
    pub(crate) from_cache: bool,
}

#[derive(Debug, Deserialize)]
struct VersionBody {
    slug: String,
    version: u32,
    content_hash: String,
    tool: serde_json::Value,
}

/// The library at one URL, with a token and a cache folder.
#[derive(Debug, Clone)]
pub(crate) struct RegistryClient {
    base: String,
    token: Option<String>,
    http: reqwest::Client,
    cache: Option<PathBuf>,
}

impl RegistryClient {
    /// The library at `url` (`http://HOST:PORT`, with or without `/api/v1`), calling with
    /// `token`, caching pulled versions under `cache` when given.
    pub(crate) fn new(
        url: &str,
        token: Option<String>,
        cache: Option<PathBuf>,
    ) -> Result<RegistryClient, ClientError> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let trimmed = url.trim_end_matches('/');
        let base = if trimmed.ends_with("/api/v1") {
            trimmed.to_owned()
        } else {
            format!("{trimmed}/api/v1")
        };
        let http = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(30))
            .build()
            .map_err(|e| ClientError::Unexpected(e.to_string()))?;
        Ok(RegistryClient { base, token, http, cache })
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let request = self.http.request(method, format!("{}{path}", self.base));
        match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    /// Sends `request`; the answer's JSON, or the problem the library answered with.
    async fn send<T: serde::de::DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<T, ClientError> {
        let unreachable = |e| ClientError::Unreachable {
            url: self.base.clone(),
            reason: llmtool_providers::transport::connection_message(e),
        };
        let answer = request.send().await.map_err(unreachable)?;
        let status = answer.status();
        let bytes = answer.bytes().await.map_err(unreachable)?;
        if !status.is_success() {
            let problem: ProblemBody = serde_json::from_slice(&bytes).map_err(|_| {
                ClientError::Unexpected(format!("status {status} with no problem document"))
            })?;
            return Err(ClientError::Refused {
                status: status.as_u16(),
                title: problem.title,
                detail: problem.detail,
                diagnostics: problem.diagnostics,
            });
        }
        let body = if bytes.is_empty() { b"null".as_slice() } else { &bytes };
        serde_json::from_slice(body).map_err(|e| ClientError::Unexpected(e.to_string()))
    }

    /// Publishes the tool file `text`.
    pub(crate) async fn publish(
        &self,
        text: &str,
        slug: Option<&str>,
        note: Option<&str>,
    ) -> Result<Published, ClientError> {
        let mut query = Vec::new();
        if let Some(slug) = slug {
            query.push(("slug", slug));
        }
        if let Some(note) = note {
            query.push(("note", note));
        }
        let request =
            self.request(reqwest::Method::POST, "/tools").query(&query).body(text.to_owned());
        self.send(request).await
    }

    pub(crate) async fn tag(&self, slug: &str, tag: &str) -> Result<(), ClientError> {
        let request = self.request(reqwest::Method::PUT, &format!("/tools/{slug}/tags/{tag}"));
        self.send::<serde_json::Value>(request).await.map(drop)
    }

    pub(crate) async fn label(
        &self,
        slug: &str,
        label: &str,
        version: u32,
    ) -> Result<(), ClientError> {
        let request = self
            .request(reqwest::Method::PUT, &format!("/tools/{slug}/labels/{label}"))
            .json(&serde_json::json!({ "version": version }));
        self.send::<serde_json::Value>(request).await.map(drop)
    }

    pub(crate) async fn search(
        &self,
        text: Option<&str>,
        tag: Option<&str>,
        limit: u32,
    ) -> Result<Page, ClientError> {
        let mut query = vec![("limit", limit.to_string())];
        if let Some(text) = text {
            query.push(("q", text.to_owned()));
        }
        if let Some(tag) = tag {
            query.push(("tag", tag.to_owned()));
        }
        self.send(self.request(reqwest::Method::GET, "/tools").query(&query)).await
    }

    /// The version `reference` points at, as a canonical tool file checked against its
    /// content hash; from the cache, with `from_cache`, when the library cannot be reached.
    pub(crate) async fn pull(&self, reference: &Reference) -> Result<Pulled, ClientError> {
        let path = match (&reference.version, &reference.label) {
            (Some(number), _) => format!("/tools/{}/versions/{number}", reference.slug),
            (None, Some(label)) => format!("/tools/{}?label={label}", reference.slug),
            (None, None) => format!("/tools/{}", reference.slug),
        };
        match self.send::<VersionBody>(self.request(reqwest::Method::GET, &path)).await {
            Ok(body) => {
                let text = llmtool_core::format::format_source(&body.tool.to_string(), false)
                    .map_err(|e| ClientError::Unexpected(e.to_string()))?
                    .text;
                if llmtool_registry::content_hash(&text) != body.content_hash {
                    return Err(ClientError::Unexpected(format!(
                        "{}@{} does not match its content hash",
                        body.slug, body.version
                    )));
                }
                let pulled =
                    Pulled { slug: body.slug, version: body.version, text, from_cache: false };
                self.remember(reference, &pulled);
                Ok(pulled)
            }
            Err(unreachable @ ClientError::Unreachable { .. }) => {
                self.recall(reference).ok_or(unreachable)
            }
            Err(other) => Err(other),
        }
    }

    /// The folder of this library's cache.
    fn cache_dir(&self) -> Option<PathBuf> {
        let host: String = self
            .base
            .trim_start_matches("http://")
            .trim_start_matches("https://")
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' })
            .collect();
        self.cache.as_ref().map(|dir| dir.join(host))
    }

    /// Keeps a pulled version, and what `reference` points at now (best effort: a cache that
    /// cannot be written only loses the fallback).
    fn remember(&self, reference: &Reference, pulled: &Pulled) {
        let Some(dir) = self.cache_dir() else { return };
        // A private library's tools are the user's alone here too.
        let _ = llmtool_log::private::private_dir_all(&dir);
        let _ = llmtool_log::private::write_private(
            &dir.join(format!("{}@{}.json", pulled.slug, pulled.version)),
            pulled.text.as_bytes(),
        );
        let _ = llmtool_log::private::write_private(
            &dir.join(format!("{}.pointer", reference.pointer())),
            pulled.version.to_string().as_bytes(),
        );
    }

    /// The cached version `reference` points at: a numbered version is immutable, so any
    /// copy of it serves; a label or the latest is what it pointed at when last pulled.
    fn recall(&self, reference: &Reference) -> Option<Pulled> {
        let dir = self.cache_dir()?;
        let version: u32 = match reference.version {
            Some(number) => number,
            None => std::fs::read_to_string(dir.join(format!("{}.pointer", reference.pointer())))
                .ok()?
                .trim()
                .parse()
                .ok()?,
        };
        let text =
            std::fs::read_to_string(dir.join(format!("{}@{version}.json", reference.slug))).ok()?;
        Some(Pulled { slug: reference.slug.clone(), version, text, from_cache: true })
    }
}

/// The library the user means: `--registry` (or `LLMTOOL_REGISTRY`, which clap reads into
/// it), else the config file's `registry`; the token from `LLMTOOL_TOKEN`; pulled versions
/// cached in the data directory.
pub(crate) fn client(registry: Option<&str>) -> anyhow::Result<RegistryClient> {
    let url = match registry {
        Some(url) => url.to_owned(),
        None => crate::settings::load_providers(None)?.config.registry.ok_or_else(|| {
            anyhow::anyhow!(
                "no tool library named: give --registry URL, set LLMTOOL_REGISTRY, or `registry = \"URL\"` in the config file"
            )
        })?,
    };
    let token = std::env::var("LLMTOOL_TOKEN").ok().filter(|t| !t.is_empty());
    let cache = llmtool_log::data_dir().map(|dir| dir.join("registry-cache"));
    Ok(RegistryClient::new(&url, token, cache)?)
}

/// The tool file `registry:REFERENCE` names, pulled (or taken from the cache, with a warning,
/// when the library cannot be reached); `None` for any other path.
pub(crate) fn fetch(path: &std::path::Path) -> Option<anyhow::Result<(String, Vec<u8>)>> {
    let reference = path.to_str()?.strip_prefix("registry:")?;
    Some((|| {
        let reference = Reference::parse(reference).ok_or_else(|| {
            anyhow::anyhow!("`registry:{reference}` is not SLUG, SLUG@VERSION or SLUG:LABEL")
        })?;
        let client = client(std::env::var("LLMTOOL_REGISTRY").ok().as_deref())?;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let pulled = runtime.block_on(client.pull(&reference))?;
        if pulled.from_cache {
            eprintln!(
                "warning: the tool library cannot be reached; using the cached {}@{}",
                pulled.slug, pulled.version
            );
        }
        Ok((format!("registry:{}@{}", pulled.slug, pulled.version), pulled.text.into_bytes()))
    })())
}
