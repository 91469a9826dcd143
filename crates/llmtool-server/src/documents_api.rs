//! `POST /documents/text`: a document's text, for a text variable (the studio's upload button).
//! The body is a `multipart/form-data` form whose `file` is the document: PDF, DOCX, ODT,
//! HTML, Markdown or text (`llmtool_documents` reads it, bounded, running nothing in it).

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Multipart};
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use llmtool_documents::{DocumentError, Limits};
use llmtool_registry::Role;
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::{Problem, ServerState};

/// The largest document taken, form included.
pub(crate) const MAX_DOCUMENT: usize = 16 << 20;

/// Documents read at once across the server: each holds a blocking thread (and a PDF's
/// reading thread) for up to the reader's time limit. Taken only once the whole upload has
/// arrived: a slow upload holds no reader.
static READING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(2);

/// How long an upload may take to arrive, from its request's start: 16 MiB at about 1 Mbit/s.
const UPLOAD_TIME: Duration = Duration::from_secs(150);

/// Uploads one caller may have arriving at once; past it, 429.
const UPLOADS_A_CALLER: usize = 2;

/// Uploads arriving at once across the server (each up to 16 MiB held in memory); past it, 503.
const UPLOADS: usize = 32;

/// The uploads arriving now, by caller ([`Caller::limit_key`]), and their sum.
static ARRIVING: Mutex<(BTreeMap<String, usize>, usize)> = Mutex::new((BTreeMap::new(), 0));

/// An upload's place among those arriving, given back when it has arrived (or failed to).
struct Arriving(String);

impl Arriving {
    /// A place for an upload of the caller `key`, or the problem of one too many.
    fn take(key: &str) -> Result<Arriving, Problem> {
        let mut arriving = ARRIVING.lock().unwrap_or_else(PoisonError::into_inner);
        let (by_caller, all) = &mut *arriving;
        if *all >= UPLOADS {
            return Err(Problem {
                retry_after: Some(10),
                ..Problem::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "Service Unavailable",
                    "as many uploads as the server takes at once are arriving: try again later",
                )
            });
        }
        let theirs = by_caller.entry(key.to_owned()).or_insert(0);
        if *theirs >= UPLOADS_A_CALLER {
            return Err(Problem {
                retry_after: Some(10),
                ..Problem::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "Too Many Requests",
                    format!("{UPLOADS_A_CALLER} uploads of this caller are arriving already"),
                )
            });
        }
        *theirs += 1;
        *all += 1;
        Ok(Arriving(key.to_owned()))
    }
}

impl Drop for Arriving {
    fn drop(&mut self) {
        let mut arriving = ARRIVING.lock().unwrap_or_else(PoisonError::into_inner);
        let (by_caller, all) = &mut *arriving;
        *all = all.saturating_sub(1);
        if let Some(theirs) = by_caller.get_mut(&self.0) {
            *theirs = theirs.saturating_sub(1);
            if *theirs == 0 {
                by_caller.remove(&self.0);
            }
        }
    }
}

pub(crate) fn routes() -> Router<ServerState> {
    Router::new().route("/documents/text", post(text)).layer(DefaultBodyLimit::max(MAX_DOCUMENT))
}

/// A document's text, and what it was read as.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct DocumentText {
    /// What the document was read as: `PDF`, `DOCX document`, `ODT document`, `HTML page`,
    /// `Markdown file` or `text file`.
    kind: String,
    text: String,
    /// A PDF's pages.
    pages: Option<usize>,
    characters: usize,
}

/// The text of the document in the form's `file`.
#[utoipa::path(post, path = "/documents/text", security((), ("bearer" = [])),
    request_body(content_type = "multipart/form-data", description = "A form whose `file` is the document (at most 16 MiB)"),
    responses((status = 200, body = DocumentText), (status = 400, description = "The form has no `file`, or is not a form", body = Problem), (status = 413, description = "The document is larger than 16 MiB", body = Problem), (status = 422, description = "The document has no text (a scanned PDF), is damaged, encrypted, or of a kind that is not read", body = Problem), (status = 408, description = "The upload took longer than 150 s to arrive", body = Problem), (status = 429, description = "Two uploads of this caller are arriving already: try again after `Retry-After`", body = Problem), (status = 503, description = "As many PDFs as the server reads at once are being read, or as many uploads as it takes at once are arriving: try again after `Retry-After`", body = Problem), (status = 401, description = "No token, or one the library does not know", body = Problem), (status = 403, description = "The token's role is too low", body = Problem)))]
pub(crate) async fn text(
    caller: Caller,
    mut form: Multipart,
) -> Result<Json<DocumentText>, Problem> {
    // A signed-in caller even when the library is open to read: reading a document takes
    // work, and that is for the library's members.
    caller.require_token(Role::Viewer)?;
    // The upload arrives first, in its time, a few a caller: only then does it wait for a
    // reader (two slow uploads once held both readers, and every other upload waited).
    let arriving = Arriving::take(&caller.limit_key)?;
    let received = tokio::time::timeout(UPLOAD_TIME, received_file(&mut form)).await;
    let (name, bytes) = received.map_err(|_| {
        let detail = format!("the upload took longer than {} s", UPLOAD_TIME.as_secs());
        Problem::new(StatusCode::REQUEST_TIMEOUT, "Request Timeout", detail)
    })??;
    drop(arriving);
    // A few at once; the next one waits its turn, bounded by the request's own time limit.
    let _turn =
        READING.acquire().await.map_err(|_| Problem::internal("the document readers stopped"))?;
    let limits = Limits { max_bytes: MAX_DOCUMENT as u64, ..Limits::default() };
    let read =
        tokio::task::spawn_blocking(move || llmtool_documents::extract(&bytes, &name, &limits))
            .await
            .map_err(|_| Problem::internal("reading the document stopped"))?;
    match read {
        Ok(read) => Ok(Json(DocumentText {
            kind: read.kind.to_string(),
            characters: read.text.chars().count(),
            text: read.text,
            pages: read.pages,
        })),
        Err(error @ DocumentError::Io(_)) => Err(Problem::internal(error.to_string())),
        Err(error @ DocumentError::Busy { .. }) => Err(Problem {
            retry_after: Some(60),
            ..Problem::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "Service Unavailable",
                error.to_string(),
            )
        }),
        Err(error) => Err(Problem::unprocessable(error.to_string())),
    }
}

/// The file name and bytes of the form's `file`.
async fn received_file(form: &mut Multipart) -> Result<(String, Bytes), Problem> {
    let unreadable = |error: axum::extract::multipart::MultipartError| {
        let status = error.status();
        let title = status.canonical_reason().unwrap_or("Bad Request");
        Problem::new(status, title, format!("the form cannot be read: {}", error.body_text()))
    };
    while let Some(field) = form.next_field().await.map_err(unreadable)? {
        if field.name() == Some("file") {
            let name = field.file_name().unwrap_or_default().to_owned();
            return Ok((name, field.bytes().await.map_err(unreadable)?));
        }
    }
    Err(Problem::bad_request("the form has no `file`"))
}
