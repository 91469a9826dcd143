//! `web_search`: a query sent to the operator's search engine (a `SearXNG` instance's JSON API,
//! Brave Search or Tavily), its results given to the model as titles, addresses and snippets.

use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{Value, json};

/// The search engines `web_search` speaks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Searxng,
    Brave,
    Tavily,
}

impl Engine {
    pub fn parse(name: &str) -> Option<Engine> {
        match name.to_ascii_lowercase().as_str() {
            "searxng" => Some(Engine::Searxng),
            "brave" => Some(Engine::Brave),
            "tavily" => Some(Engine::Tavily),
            _ => None,
        }
    }

    /// The engine's own address, where it has one.
    fn default_url(self) -> Option<&'static str> {
        match self {
            Engine::Searxng => None,
            Engine::Brave => Some("https://api.search.brave.com/res/v1/web/search"),
            Engine::Tavily => Some("https://api.tavily.com/search"),
        }
    }
}

/// One result of a search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

/// A search engine with its address and key.
#[derive(Clone)]
pub struct Search {
    engine: Engine,
    url: String,
    key: Option<String>,
    client: reqwest::Client,
    /// Results given to the model at most.
    pub most: usize,
}

impl std::fmt::Debug for Search {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("Search")
            .field("engine", &self.engine)
            .field("url", &self.url)
            .field("most", &self.most)
            .finish_non_exhaustive()
    }
}

impl Search {
    /// `engine` at `url` (its own address when `None`), with `key` for the engines that
    /// need one.
    pub fn new(engine: Engine, url: Option<&str>, key: Option<String>) -> Result<Search, String> {
        let url = url
            .map(str::to_owned)
            .or_else(|| engine.default_url().map(str::to_owned))
            .ok_or("a SearXNG search needs its instance's address (`url`)")?;
        if engine != Engine::Searxng && key.is_none() {
            return Err(format!("{engine:?} search needs a key"));
        }
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(20))
            .user_agent(concat!("llmtool/", env!("CARGO_PKG_VERSION"), " (web_search)"))
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Search { engine, url, key, client, most: 8 })
    }

    /// The results of `query`, as the model reads them.
    pub async fn search(&self, query: &str) -> Result<String, String> {
        let hits = self.hits(query).await?;
        if hits.is_empty() {
            return Ok(format!("no results for `{query}`"));
        }
        let mut out = String::new();
        for (index, hit) in hits.iter().take(self.most).enumerate() {
            let _ =
                writeln!(out, "{}. {}\n   {}\n   {}", index + 1, hit.title, hit.url, hit.snippet);
        }
        Ok(out.trim_end().to_owned())
    }

    /// The engine's results for `query`.
    pub async fn hits(&self, query: &str) -> Result<Vec<Hit>, String> {
        let key = self.key.as_deref().unwrap_or("");
        let with_query = |base: &str, pairs: &[(&str, &str)]| -> Result<url::Url, String> {
            let mut url =
                url::Url::parse(base).map_err(|e| format!("the search engine's address: {e}"))?;
            url.query_pairs_mut().extend_pairs(pairs);
            Ok(url)
        };
        let request = match self.engine {
            Engine::Searxng => {
                let base = format!("{}/search", self.url.trim_end_matches('/'));
                self.client.get(with_query(&base, &[("q", query), ("format", "json")])?)
            }
            Engine::Brave => self
                .client
                .get(with_query(&self.url, &[("q", query)])?)
                .header("accept", "application/json")
                .header("x-subscription-token", key),
            Engine::Tavily => self
                .client
                .post(&self.url)
                .bearer_auth(key)
                .json(&json!({ "query": query, "max_results": self.most })),
        };
        let response = request
            .send()
            .await
            .map_err(|e| format!("the search engine cannot be reached: {}", e.without_url()))?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("the search engine answered {status}"));
        }
        let body: Value = response
            .json()
            .await
            .map_err(|e| format!("the search engine's answer is not JSON: {}", e.without_url()))?;
        let (list, snippet) = match self.engine {
            Engine::Searxng | Engine::Tavily => ("/results", "content"),
            Engine::Brave => ("/web/results", "description"),
        };
        let text =
            |hit: &Value, key: &str| hit.get(key).and_then(Value::as_str).unwrap_or("").to_owned();
        Ok(body
            .pointer(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|hit| Hit {
                title: text(hit, "title"),
                url: text(hit, "url"),
                snippet: text(hit, snippet),
            })
            .collect())
    }
}
