//! The web studio at `/`: its pages (the gallery, a tool's page, a conversation's, the editor, sign-in, an
//! invite's page, a public snapshot's, the people and teams of the library, the Control Center's integrations,
//! prices, spend, budgets and audit log) and
//! their scripts and stylesheet, embedded in the binary (`llmtool-studio`), each sent with a
//! Content Security Policy that lets a page load only from this server.

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse as _, Response};
use axum::routing::get;
use llmtool_registry::{Role, Selector};

use crate::auth::Caller;
use crate::{Problem, ServerState};

/// Scripts, styles, images and requests from this server only; no plugins, no frames, no
/// `<base>`. Styles may be inline because the editor (`CodeMirror`) injects its own.
const POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

pub(crate) fn routes() -> Router<ServerState> {
    Router::new()
        .route("/", get(|| async { file("index.html") }))
        .route("/signin", get(|| async { file("signin.html") }))
        .route("/signin/invite", get(|| async { file("invite.html") }))
        .route("/people", get(|caller, uri| async move { admin_page(caller, &uri, "people.html") }))
        .route("/teams", get(|caller, uri| async move { admin_page(caller, &uri, "teams.html") }))
        .route("/control", get(|| async { axum::response::Redirect::to("/control/spend") }))
        .route(
            "/control/integrations",
            get(|caller, uri| async move { admin_page(caller, &uri, "integrations.html") }),
        )
        .route("/control/prices", get(|| async { file("prices.html") }))
        .route("/control/spend", get(|| async { file("spend.html") }))
        .route("/control/budgets", get(|| async { file("budgets.html") }))
        .route(
            "/control/curate",
            get(|caller, uri| async move { admin_page(caller, &uri, "curate.html") }),
        )
        .route(
            "/control/audit",
            get(|caller, uri| async move { admin_page(caller, &uri, "audit.html") }),
        )
        .route("/new", get(|| async { file("edit.html") }))
        .route("/t/{slug}", get(tool_page))
        .route("/share/{token}", get(|| async { file("share.html") }))
        .route("/c/join", get(|| async { file("join.html") }))
        .route("/tokens", get(|| async { file("tokens.html") }))
        .route("/device", get(|| async { file("device.html") }))
        .route("/s/{token}", get(snapshot_page))
        .route("/c/{id}", get(conversation_page))
        .route("/t/{slug}/edit", get(|| async { file("edit.html") }))
        .route("/assets/{name}", get(|Path(name): Path<String>| async move { file(&name) }))
        .fallback(not_found)
        .layer(axum::middleware::from_fn(inflated_unless_taken))
}

/// A studio file goes out as the binary holds it, compressed with gzip; a client whose
/// `Accept-Encoding` does not take gzip (a script, a test) gets it inflated.
async fn inflated_unless_taken(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let takes_gzip = request
        .headers()
        .get(header::ACCEPT_ENCODING)
        .and_then(|value| value.to_str().ok())
        .is_some_and(takes_gzip);
    let response = next.run(request).await;
    let compressed = response.headers().get(header::CONTENT_ENCODING).is_some_and(|v| v == "gzip");
    if takes_gzip || !compressed {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    // The studio's own files: a megabyte at most, inflated from what the build compressed.
    let Ok(gzip) = axum::body::to_bytes(body, 8 << 20).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let mut bytes = Vec::new();
    let inflated =
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gzip[..]), &mut bytes);
    if inflated.is_err() {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    }
    parts.headers.remove(header::CONTENT_ENCODING);
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, axum::body::Body::from(bytes))
}

/// Whether an `Accept-Encoding` value takes gzip: it names `gzip` (or `*`) with a weight
/// above 0.
fn takes_gzip(accepted: &str) -> bool {
    accepted.split(',').any(|coding| {
        let mut parts = coding.split(';').map(str::trim);
        let name = parts.next().unwrap_or_default();
        let refused = parts.any(|p| {
            p.strip_prefix("q=").is_some_and(|q| q.trim().parse::<f32>().is_ok_and(|q| q <= 0.0))
        });
        (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
    })
}

/// A page of the admins' (people, teams, integrations, the audit log): the page for an admin or
/// owner; for anyone else signed in, 404 with a page that says it is for admins (nothing of
/// the page's own); signed out, the sign-in page, which comes back here.
fn admin_page(caller: Result<Caller, Problem>, uri: &Uri, name: &'static str) -> Response {
    match caller {
        Ok(caller) if caller.role.is_some_and(|role| role >= Role::Admin) => file(name),
        Ok(caller) if caller.name.is_some() => {
            (StatusCode::NOT_FOUND, file("admins.html")).into_response()
        }
        Ok(_) => {
            axum::response::Redirect::to(&format!("/signin?next={}", uri.path())).into_response()
        }
        Err(problem) => problem.into_response(),
    }
}

/// A tool's page: 404 (the page says so in its layout) when the library has no such tool and
/// the caller may read it; a caller who may not read is not told whether it exists.
async fn tool_page(
    State(state): State<ServerState>,
    caller: Result<Caller, Problem>,
    Path(slug): Path<String>,
) -> Response {
    let reader = caller.ok().filter(|caller| caller.require(Role::Viewer, state.access).is_ok());
    if let Some(caller) = reader {
        // A tool the caller does not see is missing, as on every other path.
        let found = crate::api::seen_version(&state, &caller, &slug, &Selector::Latest).await;
        if found.is_err_and(|problem| problem.status == 404 || problem.status == 400) {
            return (StatusCode::NOT_FOUND, file("tool.html")).into_response();
        }
    }
    file("tool.html")
}

/// A conversation's page: 404 (the page says so in its layout) for a signed-in caller who may
/// not read it, exactly as for one that does not exist; the page asks for sign-in otherwise.
async fn conversation_page(
    State(state): State<ServerState>,
    caller: Result<Caller, Problem>,
    Path(id): Path<String>,
) -> Response {
    if let Some(caller) = caller.ok().filter(|caller| caller.name.is_some())
        && crate::conversation_api::standing(&state, &caller, &id).await.is_err()
    {
        return (StatusCode::NOT_FOUND, file("conversation.html")).into_response();
    }
    file("conversation.html")
}

/// A public snapshot's page, for anyone with its address: 404 (the page says so in its
/// layout) when the API would say there is none. Never indexed, kept, or named in a `Referer`.
async fn snapshot_page(
    State(state): State<ServerState>,
    caller: Result<Caller, Problem>,
    Path(token): Path<String>,
) -> Response {
    // Within the caller's (or their address's) rate limit, as the API's answer is.
    if let Err(problem) = caller.as_ref()
        && problem.status == 429
    {
        return problem.clone().into_response();
    }
    let status = match crate::snapshot_api::is_served(&state, &token).await {
        Ok(true) => StatusCode::OK,
        Ok(false) => StatusCode::NOT_FOUND,
        Err(problem) => return problem.into_response(),
    };
    let mut page = (status, file("snapshot.html")).into_response();
    for (name, value) in crate::snapshot_api::UNLISTED {
        page.headers_mut().insert(name, header::HeaderValue::from_static(value));
    }
    page
}

/// Any other address: 404, as a problem document under `/api/`, else as a page in the
/// studio's layout.
async fn not_found(uri: Uri) -> Response {
    if uri.path().starts_with("/api/") {
        return Problem::new(StatusCode::NOT_FOUND, "Not Found", "no such address in the API")
            .into_response();
    }
    (StatusCode::NOT_FOUND, file("missing.html")).into_response()
}

/// The studio's file `name`, or 404.
fn file(name: &str) -> Response {
    let Some(asset) = llmtool_studio::asset(name) else {
        return (StatusCode::NOT_FOUND, "no such file in the studio").into_response();
    };
    let headers = [
        (header::CONTENT_TYPE, asset.media_type),
        (header::CONTENT_SECURITY_POLICY, POLICY),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "same-origin"),
        // The files change with the binary: a browser asks again (cheaply) each time.
        (header::CACHE_CONTROL, "no-cache"),
        (header::CONTENT_ENCODING, "gzip"),
        (header::VARY, "Accept-Encoding"),
    ];
    (headers, asset.gzip).into_response()
}
