//! [`LibraryClient`]: a client of a tool library's HTTP API (`llmtool serve`), for publishing,
//! searching and pulling, with a cache of the versions it pulled, so that a tool pulled once
//! still loads when the library cannot be reached. Its bodies are the server's own
//! ([`crate::wire`]); its HTTP client is llmtool's one setup
//! (`llmtool_providers::transport::api_client`).

use std::path::PathBuf;
use std::time::Duration;

use llmtool_providers::transport::{Timeouts, api_client, connection_message};

use crate::model::{Page, Published, Selector};
use crate::reference::Reference;
use crate::wire::{LabelBody, ProblemBody, Signed, VersionBody};

/// The longest a request to the library may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// How many of the library's slugs an unknown slug is compared with.
const SUGGESTION_SLUGS: u32 = 200;

/// Why a request to the library failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
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

/// A version as pulled: its number and the tool file's canonical text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pulled {
    pub slug: String,
    pub version: u32,
    pub text: String,
    /// Whether it came from the cache because the library could not be reached.
    pub from_cache: bool,
}

/// The library at one URL, with a token and a cache folder.
#[derive(Debug, Clone)]
pub struct LibraryClient {
    base: String,
    token: Option<String>,
    http: reqwest::Client,
    cache: Option<PathBuf>,
    /// What to do when the library cannot be reached, said after why.
    unreachable_hint: Option<String>,
}

impl LibraryClient {
    /// The library at `url` (`http://HOST:PORT`, with or without `/api/v1`), calling with
    /// `token`, caching pulled versions under `cache` when given.
    pub fn new(
        url: &str,
        token: Option<String>,
        cache: Option<PathBuf>,
    ) -> Result<LibraryClient, ClientError> {
        let trimmed = url.trim_end_matches('/');
        let base = if trimmed.ends_with("/api/v1") {
            trimmed.to_owned()
        } else {
            format!("{trimmed}/api/v1")
        };
        let http = api_client(Timeouts::default())
            .map_err(|error| ClientError::Unexpected(error.to_string()))?;
        Ok(LibraryClient { base, token, http, cache, unreachable_hint: None })
    }

    /// The same client, adding `hint` (what to do) to the error when the library cannot be
    /// reached.
    #[must_use]
    pub fn with_unreachable_hint(mut self, hint: impl Into<String>) -> LibraryClient {
        self.unreachable_hint = Some(hint.into());
        self
    }

    /// The library's API address (`http://HOST:PORT/api/v1`).
    pub fn url(&self) -> &str {
        &self.base
    }

    /// Whether the client calls with a token.
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }

    pub(crate) fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.request_to(method, &format!("{}{path}", self.base))
    }

    /// A request to `url` on the library's server (outside its API, as `/mcp` is), with the
    /// token.
    pub(crate) fn request_to(&self, method: reqwest::Method, url: &str) -> reqwest::RequestBuilder {
        let request = self.http.request(method, url).timeout(REQUEST_TIMEOUT);
        match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    /// Sends `request`; the answer's JSON, or the problem the library answered with.
    pub(crate) async fn send<T: serde::de::DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<T, ClientError> {
        let answer = request.send().await.map_err(|error| self.unreachable(error))?;
        if !answer.status().is_success() {
            return Err(self.refusal(answer).await);
        }
        let bytes = answer.bytes().await.map_err(|error| self.unreachable(error))?;
        let body = if bytes.is_empty() { b"null".as_slice() } else { &bytes };
        serde_json::from_slice(body).map_err(|e| ClientError::Unexpected(e.to_string()))
    }

    /// The library could not be reached: why, and what to do.
    pub(crate) fn unreachable(&self, error: reqwest::Error) -> ClientError {
        let mut reason = connection_message(error);
        if let Some(hint) = &self.unreachable_hint {
            reason = format!("{reason}; {hint}");
        }
        ClientError::Unreachable { url: self.base.clone(), reason }
    }

    /// The problem document of an answer that is not a success.
    pub(crate) async fn refusal(&self, answer: reqwest::Response) -> ClientError {
        let status = answer.status();
        let bytes = match answer.bytes().await {
            Ok(bytes) => bytes,
            Err(error) => return self.unreachable(error),
        };
        match serde_json::from_slice::<ProblemBody>(&bytes) {
            Ok(problem) => ClientError::Refused {
                status: status.as_u16(),
                title: problem.title,
                detail: problem.detail,
                diagnostics: problem.diagnostics,
            },
            Err(_) => ClientError::Unexpected(format!("status {status} with no problem document")),
        }
    }

    /// Publishes the tool file `text`; a new tool starts with `tags` (see the library's
    /// team-private rule), an existing one keeps its own.
    pub async fn publish(
        &self,
        text: &str,
        slug: Option<&str>,
        note: Option<&str>,
        tags: &[String],
    ) -> Result<Published, ClientError> {
        let mut query = Vec::new();
        if let Some(slug) = slug {
            query.push(("slug", slug));
        }
        if let Some(note) = note {
            query.push(("note", note));
        }
        let tags = tags.join(",");
        if !tags.is_empty() {
            query.push(("tags", &tags));
        }
        let request =
            self.request(reqwest::Method::POST, "/tools").query(&query).body(text.to_owned());
        self.send(request).await
    }

    pub async fn tag(&self, slug: &str, tag: &str) -> Result<(), ClientError> {
        let request = self.request(reqwest::Method::PUT, &format!("/tools/{slug}/tags/{tag}"));
        self.send::<serde_json::Value>(request).await.map(drop)
    }

    pub async fn untag(&self, slug: &str, tag: &str) -> Result<(), ClientError> {
        let request = self.request(reqwest::Method::DELETE, &format!("/tools/{slug}/tags/{tag}"));
        self.send::<serde_json::Value>(request).await.map(drop)
    }

    pub async fn label(&self, slug: &str, label: &str, version: u32) -> Result<(), ClientError> {
        let request = self
            .request(reqwest::Method::PUT, &format!("/tools/{slug}/labels/{label}"))
            .json(&LabelBody { version });
        self.send::<serde_json::Value>(request).await.map(drop)
    }

    pub async fn search(
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

    /// A page of the audit log (`GET /audit`), filtered by `filters` (`actor`, `action`,
    /// `target`, `since`, `cursor`, `limit`, as the route takes them).
    pub async fn audit(&self, filters: &[(&str, String)]) -> Result<crate::AuditPage, ClientError> {
        self.send(self.request(reqwest::Method::GET, "/audit").query(filters)).await
    }

    /// Every integration (`GET /integrations`).
    pub async fn integrations(&self) -> Result<Vec<crate::Integration>, ClientError> {
        self.send(self.request(reqwest::Method::GET, "/integrations")).await
    }

    /// Adds an integration (`POST /integrations`, the body as the route takes it).
    pub async fn add_integration(
        &self,
        body: &serde_json::Value,
    ) -> Result<crate::Integration, ClientError> {
        self.send(self.request(reqwest::Method::POST, "/integrations").json(body)).await
    }

    /// Changes an integration (`PATCH /integrations/{name}`).
    pub async fn edit_integration(
        &self,
        name: &str,
        body: &serde_json::Value,
    ) -> Result<crate::Integration, ClientError> {
        let path = format!("/integrations/{name}");
        self.send(self.request(reqwest::Method::PATCH, &path).json(body)).await
    }

    pub async fn remove_integration(&self, name: &str) -> Result<(), ClientError> {
        let path = format!("/integrations/{name}");
        self.send::<serde_json::Value>(self.request(reqwest::Method::DELETE, &path)).await.map(drop)
    }

    /// Tests an integration with one short request (`POST /integrations/{name}/test`).
    pub async fn test_integration(
        &self,
        name: &str,
        model: Option<&str>,
    ) -> Result<crate::IntegrationTest, ClientError> {
        let path = format!("/integrations/{name}/test");
        let body = serde_json::json!({ "model": model });
        self.send(self.request(reqwest::Method::POST, &path).json(&body)).await
    }

    /// Seals every integration's key with the server's current integration key
    /// (`POST /integrations/rotate`): what was resealed.
    pub async fn rotate_integrations(&self) -> Result<serde_json::Value, ClientError> {
        self.send(self.request(reqwest::Method::POST, "/integrations/rotate")).await
    }

    /// Who the client's token belongs to, and its role (`GET /session`).
    pub async fn who(&self) -> Result<Signed, ClientError> {
        self.send(self.request(reqwest::Method::GET, "/session")).await
    }

    /// The totals of the runs made through the library, by `by` (`tool`, `model`, `day` or
    /// `origin`), since `since` (as `GET /usage` takes it).
    pub async fn usage(
        &self,
        by: &str,
        since: Option<&str>,
    ) -> Result<Vec<llmtool_log::Total>, ClientError> {
        let mut query = vec![("by", by)];
        if let Some(since) = since {
            query.push(("since", since));
        }
        self.send(self.request(reqwest::Method::GET, "/usage").query(&query)).await
    }

    /// Every version of `slug` (`GET /tools/{slug}/versions`), oldest first.
    pub async fn versions(&self, slug: &str) -> Result<Vec<VersionBody>, ClientError> {
        let request = self.request(reqwest::Method::GET, &format!("/tools/{slug}/versions"));
        let mut versions = self.send::<Vec<VersionBody>>(request).await?;
        versions.sort_by_key(|version| version.version);
        Ok(versions)
    }

    /// The version `reference` points at, as a canonical tool file checked against its
    /// content hash; from the cache, with `from_cache`, when the library cannot be reached.
    pub async fn pull(&self, reference: &Reference) -> Result<Pulled, ClientError> {
        let slug = &reference.slug;
        let request = match &reference.selector {
            Selector::Version(number) => {
                self.request(reqwest::Method::GET, &format!("/tools/{slug}/versions/{number}"))
            }
            Selector::Label(label) => self
                .request(reqwest::Method::GET, &format!("/tools/{slug}"))
                .query(&[("label", label)]),
            Selector::Latest => self.request(reqwest::Method::GET, &format!("/tools/{slug}")),
        };
        match self.send::<VersionBody>(request).await {
            Ok(body) => {
                let text = body.checked_text()?;
                let pulled =
                    Pulled { slug: body.slug, version: body.version, text, from_cache: false };
                self.remember(reference, &pulled);
                Ok(pulled)
            }
            Err(unreachable @ ClientError::Unreachable { .. }) => {
                self.recall(reference).ok_or(unreachable)
            }
            Err(ClientError::Refused { status: 404, title, detail, diagnostics })
                if detail.starts_with("no tool `") =>
            {
                let detail = match self.closest_slug(slug).await {
                    Some(near) => format!("{detail}; did you mean `{near}`?"),
                    None => detail,
                };
                Err(ClientError::Refused { status: 404, title, detail, diagnostics })
            }
            Err(other) => Err(other),
        }
    }

    /// The slug of the library nearest to `slug`, if one is near enough to be a typo of it
    /// (among the first [`SUGGESTION_SLUGS`] the library lists).
    async fn closest_slug(&self, slug: &str) -> Option<String> {
        let page = self.search(None, None, SUGGESTION_SLUGS).await.ok()?;
        let slugs = page.tools.iter().map(|tool| tool.slug.as_str());
        llmtool_format::suggest::closest(slug, slugs).map(str::to_owned)
    }

    /// [`LibraryClient::pull`] for code that is not async (reading a tool file), from
    /// anywhere: on a thread of its own, so that it works inside an async runtime too.
    pub fn pull_blocking(&self, reference: &Reference) -> Result<Pulled, ClientError> {
        std::thread::scope(|scope| {
            let pulling = scope.spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|error| ClientError::Unexpected(error.to_string()))?;
                runtime.block_on(self.pull(reference))
            });
            pulling.join().unwrap_or_else(|_| {
                Err(ClientError::Unexpected("the pull stopped unexpectedly".into()))
            })
        })
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

    /// The cache's name for what `reference` points at now.
    fn pointer(reference: &Reference) -> String {
        match &reference.selector {
            Selector::Latest => format!("{}:latest", reference.slug),
            _ => reference.to_string(),
        }
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
            &dir.join(format!("{}.pointer", Self::pointer(reference))),
            pulled.version.to_string().as_bytes(),
        );
    }

    /// The cached version `reference` points at: a numbered version is immutable, so any
    /// copy of it serves; a label or the latest is what it pointed at when last pulled.
    fn recall(&self, reference: &Reference) -> Option<Pulled> {
        let dir = self.cache_dir()?;
        let version: u32 = match reference.version() {
            Some(number) => number,
            None => {
                std::fs::read_to_string(dir.join(format!("{}.pointer", Self::pointer(reference))))
                    .ok()?
                    .trim()
                    .parse()
                    .ok()?
            }
        };
        let text =
            std::fs::read_to_string(dir.join(format!("{}@{version}.json", reference.slug))).ok()?;
        Some(Pulled { slug: reference.slug.clone(), version, text, from_cache: true })
    }
}

impl VersionBody {
    /// The version's tool file in canonical form, checked against its content hash.
    pub fn checked_text(&self) -> Result<String, ClientError> {
        let text = llmtool_format::format::format_source(self.tool.get(), false)
            .map_err(|e| ClientError::Unexpected(e.to_string()))?
            .text;
        if crate::content_hash(&text) != self.content_hash {
            return Err(ClientError::Unexpected(format!(
                "{}@{} does not match its content hash",
                self.slug, self.version
            )));
        }
        Ok(text)
    }
}
