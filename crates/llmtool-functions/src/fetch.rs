//! `fetch_url`: a web page as readable text. Only `http` and `https`; only public addresses
//! unless the operator allowed a host or address; every redirect checked again; the
//! connection made to the address that was checked (a name that resolves differently the
//! second time reaches nothing new); size and time bounded.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use url::Url;

use crate::address::private_kind;

/// How much one fetch may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchLimits {
    pub time: Duration,
    /// Bytes of the page as sent.
    pub bytes: u64,
    pub redirects: u8,
}

impl Default for FetchLimits {
    fn default() -> Self {
        FetchLimits { time: Duration::from_secs(20), bytes: 4 << 20, redirects: 5 }
    }
}

/// Fetches pages for a run.
#[derive(Debug, Clone, Default)]
pub struct Fetcher {
    /// Hosts and addresses allowed although not public, lowercased.
    allow: Vec<String>,
    pub limits: FetchLimits,
}

impl Fetcher {
    pub fn new(allow: &[String]) -> Fetcher {
        let allow = allow.iter().map(|host| host.trim().to_ascii_lowercase()).collect();
        Fetcher { allow, limits: FetchLimits::default() }
    }

    /// The text of the page at `url`, or why it cannot be had (for the model to read).
    pub async fn fetch(&self, url: &str) -> Result<String, String> {
        let deadline = tokio::time::Instant::now() + self.limits.time;
        let mut url = Url::parse(url.trim()).map_err(|e| format!("`{url}` is not a URL: {e}"))?;
        for _ in 0..=self.limits.redirects {
            let addresses = self.addresses(&url).await?;
            let client = client(&url, &addresses, self.limits.time)?;
            let sent = tokio::time::timeout_at(deadline, client.get(url.clone()).send());
            let response = sent
                .await
                .map_err(|_| self.too_slow())?
                .map_err(|e| format!("cannot fetch {}: {}", shown(&url), reason(&e)))?;
            let status = response.status();
            if status.is_redirection() {
                let location = response
                    .headers()
                    .get(reqwest::header::LOCATION)
                    .and_then(|value| value.to_str().ok())
                    .ok_or_else(|| format!("{} redirects nowhere ({status})", shown(&url)))?;
                url = url.join(location).map_err(|e| format!("a redirect to `{location}`: {e}"))?;
                continue;
            }
            if !status.is_success() {
                return Err(format!("{} answered {status}", shown(&url)));
            }
            let html = response
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|value| value.to_str().ok())
                .is_some_and(|kind| kind.contains("html"));
            let body = tokio::time::timeout_at(deadline, self.body(response))
                .await
                .map_err(|_| self.too_slow())??;
            let name = if html { "page.html".to_owned() } else { file_name(&url) };
            let limits = llmtool_documents::Limits {
                max_bytes: self.limits.bytes,
                ..llmtool_documents::Limits::default()
            };
            return llmtool_documents::extract(&body, &name, &limits)
                .map(|document| document.text)
                .map_err(|e| format!("no text in {}: {e}", shown(&url)));
        }
        Err(format!("more than {} redirects; stopped", self.limits.redirects))
    }

    /// The addresses `url` reaches, each one allowed; or why not.
    async fn addresses(&self, url: &Url) -> Result<Vec<SocketAddr>, String> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!("`{}:` URLs cannot be fetched: only http and https", url.scheme()));
        }
        let host = url.host_str().ok_or_else(|| format!("{} names no host", shown(url)))?;
        let port = url.port_or_known_default().unwrap_or(80);
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let addresses: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) => tokio::net::lookup_host((bare, port))
                .await
                .map_err(|e| format!("cannot find `{bare}`: {e}"))?
                .collect(),
        };
        if addresses.is_empty() {
            return Err(format!("`{bare}` has no address"));
        }
        if self.allow.iter().any(|allowed| allowed.eq_ignore_ascii_case(bare)) {
            return Ok(addresses);
        }
        for address in &addresses {
            let ip = address.ip();
            if self.allow.contains(&ip.to_string()) {
                continue;
            }
            if let Some(kind) = private_kind(ip) {
                return Err(format!(
                    "`{bare}` is {kind} ({ip}), which fetch_url may not reach unless the operator allows it"
                ));
            }
        }
        Ok(addresses)
    }

    /// The body, up to the limit.
    async fn body(&self, mut response: reqwest::Response) -> Result<Vec<u8>, String> {
        let limit = self.limits.bytes;
        if response.content_length().is_some_and(|length| length > limit) {
            return Err(format!("the page is larger than {limit} bytes"));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| reason(&e))? {
            if (body.len() + chunk.len()) as u64 > limit {
                return Err(format!("the page is larger than {limit} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    fn too_slow(&self) -> String {
        format!("the page took longer than {} s", self.limits.time.as_secs())
    }
}

/// A client that reaches `url`'s host only at `addresses`, and follows no redirect itself.
fn client(url: &Url, addresses: &[SocketAddr], time: Duration) -> Result<reqwest::Client, String> {
    // rustls needs a process-wide crypto provider; installing it twice is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(time)
        .no_proxy()
        .user_agent(concat!("llmtool/", env!("CARGO_PKG_VERSION"), " (fetch_url)"));
    if let Some(url::Host::Domain(domain)) = url.host() {
        builder = builder.resolve_to_addrs(domain, addresses);
    }
    builder.build().map_err(|e| reason(&e))
}

/// The URL as messages show it: without a user name or password.
fn shown(url: &Url) -> String {
    let mut url = url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.to_string()
}

fn file_name(url: &Url) -> String {
    url.path_segments().and_then(|mut segments| segments.next_back()).unwrap_or("").to_owned()
}

fn reason(error: &reqwest::Error) -> String {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        message = format!("{message}: {cause}");
        source = cause.source();
    }
    message
}
