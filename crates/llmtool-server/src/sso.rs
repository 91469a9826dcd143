//! Single sign-on for the studio: OpenID Connect's authorization code flow (`openidconnect`),
//! with PKCE, a state bound to the browser by a cookie, and a nonce. The provider is found by
//! discovery; its ID token is checked for its signature (by the provider's JWKS, fetched again
//! when a token is signed by a key not seen yet: keys rotate), issuer, audience, expiry and
//! nonce. Its `email` claim (or, when the ID token has none, the UserInfo endpoint's for the
//! same subject) names the member who signs in; members may be made on their first sign-in
//! for the domains the config allows.
//!
//! `GET /signin/sso?next=PATH` starts a sign-in; the provider sends the browser back to
//! `GET /signin/sso/callback`, which opens a session and lands on `next`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Extension;
use axum::Router;
use axum::extract::{ConnectInfo, Query, State};
use axum::http::header::{LOCATION, SET_COOKIE};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse as _, Response};
use axum::routing::get;
use llmtool_config::{SsoConfig, read_secret};
use llmtool_mcp::transport::Connection;
use llmtool_registry::{
    Actor, NewMember, Role, SessionFor, SignIn, Store, StoreError, TOKENS_DOMAIN,
};
use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreProviderMetadata, CoreUserInfoClaims,
};
use openidconnect::{
    AsyncHttpClient, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointMaybeSet,
    EndpointNotSet, EndpointSet, HttpRequest, HttpResponse, IssuerUrl, Nonce,
    OAuth2TokenResponse as _, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, Scope,
    TokenResponse as _,
};
use serde::Deserialize;

use crate::ServerState;
use crate::auth::token_hash;
use crate::session::open_session;
use crate::sign_in::SetupError;

/// Where the provider sends the browser back.
pub(crate) const CALLBACK: &str = "/signin/sso/callback";

/// The cookie that binds a sign-in's state to the browser that started it. `SameSite=Lax`: it
/// must come back with the provider's (cross-site) redirect.
const STATE_COOKIE: &str = "llmtool_sso";

/// Its name over HTTPS.
const SECURE_STATE_COOKIE: &str = "__Host-llmtool_sso";

/// How long a sign-in may take at the provider.
const ATTEMPT_LIFETIME: Duration = Duration::from_mins(10);

/// The provider's keys are fetched again at most this often, however many tokens come signed by
/// a key not seen yet.
const REFRESH_AT_MOST_EVERY: Duration = Duration::from_secs(1);

/// The longest `next` a sign-in keeps.
const MAX_NEXT: usize = 2048;

/// The largest answer read from the provider.
const MAX_ANSWER: usize = 1 << 20;

/// A client of the provider, as discovery makes it.
type Client = CoreClient<
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// Why a sign-in failed: said on the page the browser lands on, never with a secret.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SsoError {
    #[error("the identity provider cannot be reached or answered wrongly: {0}")]
    Provider(String),
    #[error("the identity provider refused: {0}")]
    Refused(String),
    #[error("this sign-in is unknown, expired or used already: start again")]
    UnknownAttempt,
    #[error(
        "the identity provider did not accept the sign-in's code (used already, or not ours): {0}"
    )]
    Code(String),
    #[error("the identity provider's ID token is not valid here: {0}")]
    IdToken(String),
    #[error("the identity provider gave no verified e-mail address")]
    NoEmail,
    #[error("no member of this library has the e-mail `{0}`: ask an admin to add you")]
    NotAMember(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the session could not be opened: {0}")]
    Session(String),
}

impl SsoError {
    fn status(&self) -> StatusCode {
        match self {
            SsoError::Provider(_) => StatusCode::BAD_GATEWAY,
            SsoError::Refused(_) | SsoError::UnknownAttempt => StatusCode::BAD_REQUEST,
            SsoError::Code(_) | SsoError::IdToken(_) | SsoError::NoEmail => {
                StatusCode::UNAUTHORIZED
            }
            SsoError::NotAMember(_) => StatusCode::FORBIDDEN,
            SsoError::Store(_) | SsoError::Session(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// Who the provider says signed in.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    email: String,
    /// Whether the provider verified the e-mail (`None`: it does not say).
    verified: Option<bool>,
    name: Option<String>,
}

/// The single sign-on of a server.
pub struct Sso {
    issuer: IssuerUrl,
    client_id: ClientId,
    client_secret: Option<ClientSecret>,
    redirect: RedirectUrl,
    allowed_domains: Vec<String>,
    default_role: Role,
    trust_unverified_email: bool,
    http: ProviderHttp,
    /// The provider as last discovered, and when.
    discovered: tokio::sync::Mutex<Option<(Client, Instant)>>,
}

impl std::fmt::Debug for Sso {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The client secret is left out.
        f.debug_struct("Sso")
            .field("issuer", &self.issuer.as_str())
            .field("client_id", &self.client_id.as_str())
            .finish_non_exhaustive()
    }
}

impl Sso {
    /// The single sign-on that `config` describes, for a studio at `public_url`. The provider is
    /// discovered on the first sign-in, so that a server starts while it is away.
    pub fn new(config: &SsoConfig, public_url: &str) -> Result<Sso, SetupError> {
        let bad = |message: String| SetupError::Sso(message);
        let issuer = IssuerUrl::new(config.issuer.clone())
            .map_err(|e| bad(format!("`issuer` = `{}`: {e}", config.issuer)))?;
        // Over plain HTTP, anyone on the way could hand over keys of their own.
        let parsed = issuer.url();
        let loopback = match parsed.host() {
            Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(address)) => address.is_loopback(),
            Some(url::Host::Ipv6(address)) => address.is_loopback(),
            None => false,
        };
        if parsed.scheme() != "https" && !loopback {
            return Err(bad(format!(
                "`issuer` = `{}`: an identity provider is reached over https (plain http only on this machine)",
                config.issuer
            )));
        }
        let secret = read_secret(
            config.client_secret_env.as_deref(),
            config.client_secret_file.as_deref(),
            "client secret",
        )
        .map_err(|e| bad(e.0))?;
        let redirect = RedirectUrl::new(format!("{public_url}{CALLBACK}"))
            .map_err(|e| bad(format!("the redirect address: {e}")))?;
        let default_role = match &config.default_role {
            None => Role::Viewer,
            Some(role) => {
                Role::parse(role).filter(|role| *role != Role::Owner).ok_or_else(|| {
                    bad(format!("`default_role` = `{role}`: viewer, editor or admin"))
                })?
            }
        };
        let _ = rustls::crypto::ring::default_provider().install_default();
        // Redirects are not followed: an answer that sends us elsewhere is refused.
        let mut http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(15));
        if let Some(file) = &config.ca_file {
            let pem = std::fs::read(file).map_err(|e| bad(format!("`ca_file` `{file}`: {e}")))?;
            let certificates = reqwest::Certificate::from_pem_bundle(&pem)
                .map_err(|e| bad(format!("`ca_file` `{file}`: {e}")))?;
            http = http.tls_certs_merge(certificates);
        }
        Ok(Sso {
            issuer,
            client_id: ClientId::new(config.client_id.clone()),
            client_secret: secret.map(ClientSecret::new),
            redirect,
            allowed_domains: config
                .allowed_domains
                .iter()
                .map(|d| d.to_ascii_lowercase())
                .collect(),
            default_role,
            trust_unverified_email: config.trust_unverified_email,
            http: ProviderHttp(http.build().map_err(|e| bad(e.to_string()))?),
            discovered: tokio::sync::Mutex::new(None),
        })
    }

    /// The provider's client: discovered once, and again when `again` and the last discovery is
    /// older than [`REFRESH_AT_MOST_EVERY`] (a token signed by a key not seen yet).
    async fn client(&self, again: bool) -> Result<Client, SsoError> {
        let mut discovered = self.discovered.lock().await;
        if let Some((client, at)) = discovered.as_ref()
            && (!again || at.elapsed() < REFRESH_AT_MOST_EVERY)
        {
            return Ok(client.clone());
        }
        let metadata = CoreProviderMetadata::discover_async(self.issuer.clone(), &self.http)
            .await
            .map_err(|e| SsoError::Provider(error_chain(&e)))?;
        let client = CoreClient::from_provider_metadata(
            metadata,
            self.client_id.clone(),
            self.client_secret.clone(),
        )
        .set_redirect_uri(self.redirect.clone());
        *discovered = Some((client.clone(), Instant::now()));
        Ok(client)
    }

    /// Starts a sign-in that lands on `next`: the provider's address to send the browser to,
    /// and the state its cookie must carry.
    async fn begin(&self, store: &dyn Store, next: &str) -> Result<(String, String), SsoError> {
        let client = self.client(false).await?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let (url, state, nonce) = client
            .authorize_url(
                CoreAuthenticationFlow::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .add_scope(Scope::new("email".into()))
            .add_scope(Scope::new("profile".into()))
            .set_pkce_challenge(challenge)
            .url();
        let sign_in = SignIn {
            nonce: nonce.secret().clone(),
            verifier: verifier.secret().clone(),
            next: next.to_owned(),
        };
        store.begin_sign_in(&token_hash(state.secret()), &sign_in, ATTEMPT_LIFETIME).await?;
        Ok((url.to_string(), state.secret().clone()))
    }

    /// Finishes the sign-in of `state` with the provider's `code`: who signed in, and the page
    /// to land on.
    async fn finish(
        &self,
        store: &dyn Store,
        code: &str,
        state: &str,
    ) -> Result<(Identity, String), SsoError> {
        let sign_in =
            store.finish_sign_in(&token_hash(state)).await?.ok_or(SsoError::UnknownAttempt)?;
        let client = self.client(false).await?;
        let answer = client
            .exchange_code(AuthorizationCode::new(code.to_owned()))
            .map_err(|e| SsoError::Provider(e.to_string()))?
            .set_pkce_verifier(PkceCodeVerifier::new(sign_in.verifier.clone()))
            .request_async(&self.http)
            .await
            .map_err(|e| SsoError::Code(error_chain(&e)))?;
        let id_token =
            answer.id_token().ok_or_else(|| SsoError::IdToken("none was given".into()))?;
        let nonce = Nonce::new(sign_in.nonce.clone());
        let claims = match id_token.claims(&client.id_token_verifier(), &nonce) {
            Ok(claims) => claims.clone(),
            // Signed by a key not seen yet: the provider may have rotated its keys.
            Err(openidconnect::ClaimsVerificationError::SignatureVerification(_)) => {
                let client = self.client(true).await?;
                id_token
                    .claims(&client.id_token_verifier(), &nonce)
                    .map_err(|e| SsoError::IdToken(error_chain(&e)))?
                    .clone()
            }
            Err(e) => return Err(SsoError::IdToken(error_chain(&e))),
        };
        let mut identity = Identity {
            email: claims.email().map(|email| email.as_str().to_owned()).unwrap_or_default(),
            verified: claims.email_verified(),
            name: claims
                .name()
                .and_then(|name| name.get(None))
                .map(|name| name.as_str().to_owned()),
        };
        // Providers that keep the ID token small give the e-mail at their UserInfo endpoint,
        // for the same subject.
        if identity.email.is_empty() {
            let subject = claims.subject().clone();
            let info: CoreUserInfoClaims = client
                .user_info(answer.access_token().clone(), Some(subject))
                .map_err(|_| SsoError::NoEmail)?
                .request_async(&self.http)
                .await
                .map_err(|e| SsoError::Provider(error_chain(&e)))?;
            identity = Identity {
                email: info.email().map(|email| email.as_str().to_owned()).unwrap_or_default(),
                verified: info.email_verified(),
                name: identity.name.or_else(|| {
                    info.name().and_then(|name| name.get(None)).map(|name| name.as_str().to_owned())
                }),
            };
        }
        // Compared as the library compares addresses: ASCII letters folded, nothing else.
        identity.email = llmtool_registry::fold_email(&identity.email);
        // An address the provider does not say it verified names nobody, unless the config
        // trusts this provider's addresses (one that never sends `email_verified`).
        let believed = identity.verified == Some(true)
            || (self.trust_unverified_email && identity.verified.is_none());
        if identity.email.is_empty() || !believed {
            return Err(SsoError::NoEmail);
        }
        Ok((identity, sign_in.next))
    }

    /// The member `identity` is: an existing one, or one made now when the provider verified
    /// an address at an allowed domain.
    async fn member(&self, store: &dyn Store, identity: &Identity) -> Result<String, SsoError> {
        let not_a_member = || SsoError::NotAMember(identity.email.clone());
        // The members made for tokens have no person behind them: nobody signs in as one.
        if identity.email.ends_with(&format!("@{TOKENS_DOMAIN}")) {
            return Err(not_a_member());
        }
        match store.member(&identity.email).await {
            Ok(member) => return Ok(member.email),
            Err(
                StoreError::NoSuchMember(_)
                | StoreError::BadEmail(_)
                | StoreError::MixedScriptEmail(_),
            ) => {}
            Err(other) => return Err(other.into()),
        }
        let domain = identity.email.rsplit_once('@').map(|(_, domain)| domain);
        let allowed = domain.is_some_and(|d| self.allowed_domains.iter().any(|a| a == d));
        // An address with characters beyond ASCII may look like another one: it signs in as
        // the member an admin added with exactly that address, never as a new one.
        if !(allowed && identity.verified == Some(true) && identity.email.is_ascii()) {
            return Err(not_a_member());
        }
        let name = identity.name.as_deref().map(display_name).filter(|name| !name.is_empty());
        let name = name.unwrap_or_else(|| {
            identity.email.split('@').next().unwrap_or(&identity.email).to_owned()
        });
        let newcomer = NewMember {
            email: identity.email.clone(),
            name,
            role: self.default_role,
            teams: Vec::new(),
        };
        match store.add_members(&[newcomer]).await {
            // Two first sign-ins at once: the other made the member.
            Ok(()) | Err(StoreError::MemberExists(_)) => Ok(identity.email.clone()),
            Err(other) => Err(other.into()),
        }
    }
}

/// A provider's name for a person as a member's display name: without control characters, at
/// most 200 characters.
fn display_name(name: &str) -> String {
    name.chars().filter(|c| !c.is_control()).take(200).collect::<String>().trim().to_owned()
}

/// The HTTP client of the provider's requests: no redirects, a timeout, answers of at most
/// [`MAX_ANSWER`] bytes.
#[derive(Debug, Clone)]
struct ProviderHttp(reqwest::Client);

/// A failed request to the provider.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct ProviderHttpError(String);

impl<'c> AsyncHttpClient<'c> for ProviderHttp {
    type Error = ProviderHttpError;
    type Future =
        Pin<Box<dyn Future<Output = Result<HttpResponse, ProviderHttpError>> + Send + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(send(self.0.clone(), request))
    }
}

/// One request to the provider.
async fn send(
    http: reqwest::Client,
    request: HttpRequest,
) -> Result<HttpResponse, ProviderHttpError> {
    let failed = |error: reqwest::Error| ProviderHttpError(error_chain(&error));
    let (parts, body) = request.into_parts();
    let mut sent = http
        .request(parts.method, parts.uri.to_string())
        .headers(parts.headers)
        .body(body)
        .send()
        .await
        .map_err(failed)?;
    let mut answer = HttpResponse::new(Vec::new());
    *answer.status_mut() = sent.status();
    *answer.headers_mut() = sent.headers().clone();
    while let Some(chunk) = sent.chunk().await.map_err(failed)? {
        if answer.body().len() + chunk.len() > MAX_ANSWER {
            return Err(ProviderHttpError("an answer over 1 MiB".into()));
        }
        answer.body_mut().extend_from_slice(&chunk);
    }
    Ok(answer)
}

/// An error and its sources, as one line.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

pub(crate) fn routes() -> Router<ServerState> {
    Router::new().route("/signin/sso", get(start)).route(CALLBACK, get(callback))
}

/// `GET /signin/sso`: where to land after signing in.
#[derive(Debug, Deserialize)]
struct Start {
    next: Option<String>,
}

async fn start(
    State(state): State<ServerState>,
    connection: Option<Extension<ConnectInfo<Connection>>>,
    headers: HeaderMap,
    Query(query): Query<Start>,
) -> Response {
    let Some(sso) = state.sign_in().sso.clone() else {
        return page(StatusCode::NOT_FOUND, "Single sign-on is not set up on this server.", None);
    };
    // Each start keeps a row for a while: an address starts as many as its allowance lets it.
    if let Err(refused) = crate::session::take_attempt(&state, connection.as_ref(), &headers).await
    {
        return refused.into_response();
    }
    let next = local_path(query.next.as_deref().filter(|next| next.len() <= MAX_NEXT));
    match sso.begin(state.store.as_ref(), &next).await {
        Ok((url, sign_in_state)) => {
            let cookie = state_cookie(&state, &headers, &sign_in_state, ATTEMPT_LIFETIME);
            (StatusCode::SEE_OTHER, [(LOCATION, url), (SET_COOKIE, cookie)]).into_response()
        }
        Err(error) => failed(&error),
    }
}

/// The cookie that binds a sign-in to this browser (`max_age` zero: its removal). Over HTTPS
/// it is `__Host-` (set by this host only, for the whole site, `Secure`), so that a sibling
/// subdomain cannot plant one.
fn state_cookie(
    state: &ServerState,
    headers: &HeaderMap,
    value: &str,
    max_age: Duration,
) -> String {
    let age = max_age.as_secs();
    if state.https(headers) {
        format!(
            "{SECURE_STATE_COOKIE}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={age}; Secure"
        )
    } else {
        format!("{STATE_COOKIE}={value}; Path=/signin/sso; HttpOnly; SameSite=Lax; Max-Age={age}")
    }
}

/// `GET /signin/sso/callback`: the provider's answer.
#[derive(Debug, Deserialize)]
struct Callback {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

async fn callback(
    State(state): State<ServerState>,
    connection: Option<Extension<ConnectInfo<Connection>>>,
    headers: HeaderMap,
    Query(query): Query<Callback>,
) -> Response {
    let Some(sso) = state.sign_in().sso.clone() else {
        return page(StatusCode::NOT_FOUND, "Single sign-on is not set up on this server.", None);
    };
    let peer = connection.map(|Extension(ConnectInfo(connection))| connection.peer.ip());
    let address = crate::auth::client_address(&state, peer, &headers);
    match signed_in(&state, &sso, &headers, address, query).await {
        Ok(response) => response,
        Err(error) => {
            if matches!(error, SsoError::Store(_) | SsoError::Provider(_) | SsoError::Session(_)) {
                tracing::warn!("a single sign-on failed: {error}");
            }
            failed(&error)
        }
    }
}

async fn signed_in(
    state: &ServerState,
    sso: &Arc<Sso>,
    headers: &HeaderMap,
    address: Option<String>,
    query: Callback,
) -> Result<Response, SsoError> {
    // The state must be the one this browser was given: a sign-in started elsewhere (a link
    // someone sent) is refused, so nobody is signed in as someone else, and nobody else's
    // words reach this page.
    let name = if state.https(headers) { SECURE_STATE_COOKIE } else { STATE_COOKIE };
    let sign_in_state = query.state.unwrap_or_default();
    let bound = crate::auth::cookie(headers, name)
        .is_some_and(|cookie| token_hash(cookie) == token_hash(&sign_in_state));
    if !bound {
        return Err(SsoError::UnknownAttempt);
    }
    if let Some(error) = query.error {
        // The attempt is spent: the provider said no.
        state.store.finish_sign_in(&token_hash(&sign_in_state)).await?;
        let described = query.error_description.map(|d| format!("{error} ({d})")).unwrap_or(error);
        return Err(SsoError::Refused(described));
    }
    let Some(code) = query.code else { return Err(SsoError::UnknownAttempt) };
    let (identity, next) = sso.finish(state.store.as_ref(), &code, &sign_in_state).await?;
    // A member made at their first sign-in is recorded as made by the provider's word.
    let provider = Actor { name: format!("sso:{}", identity.email), address };
    let email = sso.member(state.store.acting_as(provider).as_ref(), &identity).await?;
    let opened = open_session(state, headers, SessionFor::Member(&email))
        .await
        .map_err(|problem| SsoError::Session(problem.detail))?;
    let clear = state_cookie(state, headers, "", Duration::ZERO);
    let mut response = page(StatusCode::OK, &format!("Signed in as {email}."), Some(&next));
    let headers = response.headers_mut();
    for cookie in [opened.set_cookie, clear] {
        if let Ok(value) = cookie.parse() {
            headers.append(SET_COOKIE, value);
        }
    }
    Ok(response)
}

/// `next` if it is a path of this site, else `/`.
fn local_path(next: Option<&str>) -> String {
    match next {
        Some(path)
            if path.starts_with('/')
                && !path.starts_with("//")
                && !path.starts_with("/\\")
                && !path.chars().any(char::is_control) =>
        {
            path.to_owned()
        }
        _ => "/".to_owned(),
    }
}

fn failed(error: &SsoError) -> Response {
    page(error.status(), &format!("Sign-in failed: {error}."), None)
}

/// A small page saying `message`; with `next`, it goes there at once (the session cookie
/// comes with the page's own navigation, not with the provider's redirect).
fn page(status: StatusCode, message: &str, next: Option<&str>) -> Response {
    let back = crate::hop_page::Back { href: "/signin", label: "Back to sign-in" };
    crate::hop_page::page("Sign-in", status, message, next, back)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_path_of_this_site_is_landed_on() {
        assert_eq!(local_path(Some("/t/poem")), "/t/poem");
        for elsewhere in ["https://evil.example/", "//evil.example/", "/\\evil.example", "t/x"] {
            assert_eq!(local_path(Some(elsewhere)), "/", "{elsewhere}");
        }
        assert_eq!(local_path(None), "/");
    }

    #[test]
    fn a_providers_name_is_made_a_display_name() {
        assert_eq!(display_name("  Ana\u{7}\nLima "), "AnaLima");
        assert_eq!(display_name(&"x".repeat(500)).len(), 200);
    }

    #[test]
    fn a_setup_needs_a_valid_issuer_and_role() {
        let config = SsoConfig {
            issuer: "not a url".into(),
            client_id: "llmtool".into(),
            client_secret_env: None,
            client_secret_file: None,
            allowed_domains: vec![],
            default_role: None,
            ca_file: None,
            trust_unverified_email: false,
        };
        assert!(Sso::new(&config, "https://tools.example.com").is_err());
        let owner = SsoConfig {
            issuer: "https://login.example.com".into(),
            default_role: Some("owner".into()),
            ..config
        };
        assert!(
            Sso::new(&owner, "https://tools.example.com")
                .unwrap_err()
                .to_string()
                .contains("default_role")
        );
        let plain =
            SsoConfig { issuer: "http://login.example.com".into(), default_role: None, ..owner };
        assert!(
            Sso::new(&plain, "https://tools.example.com")
                .unwrap_err()
                .to_string()
                .contains("https")
        );
        let here = SsoConfig { issuer: "http://127.0.0.1:9000".into(), ..plain };
        assert!(Sso::new(&here, "https://tools.example.com").is_ok());
    }
}
