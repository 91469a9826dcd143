//! Errors as RFC 9457 problem documents (`application/problem+json`): a status, a title, a
//! detail, and for a refused tool file the diagnostics `check --format json` gives (for a
//! refused CSV file, its rows' problems).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use llmtool_registry::StoreError;
use serde::Serialize;

/// A problem document.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Problem {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub title: &'static str,
    pub status: u16,
    pub detail: String,
    /// For `429`: when to try again (the `Retry-After` header).
    #[serde(skip)]
    pub retry_after: Option<u64>,
    /// What was refused, item by item: a tool file's diagnostics, a CSV file's rows (each
    /// with its `line` and `message`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub diagnostics: Option<Vec<serde_json::Value>>,
    /// For a run a budget refused (`402`, type [`OVER_BUDGET`]): the budget, where its period
    /// stands (`spent_usd`, `reserved_usd`, `period_start`), and what the run could cost
    /// (`cost_usd`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub budget: Option<Box<serde_json::Value>>,
}

/// The type of the problem of a run refused by a hard budget.
pub const OVER_BUDGET: &str = "urn:llmtool:problem:over-budget";

impl Problem {
    pub fn new(status: StatusCode, title: &'static str, detail: impl Into<String>) -> Problem {
        Problem {
            kind: "about:blank",
            title,
            status: status.as_u16(),
            detail: detail.into(),
            retry_after: None,
            diagnostics: None,
            budget: None,
        }
    }

    pub fn unauthorized() -> Problem {
        Problem::new(
            StatusCode::UNAUTHORIZED,
            "Unauthorized",
            "a valid token is needed: `Authorization: Bearer TOKEN`",
        )
    }

    pub fn forbidden(needed: &str) -> Problem {
        Problem::forbidden_because(format!("this needs the {needed} role"))
    }

    pub fn forbidden_because(detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::FORBIDDEN, "Forbidden", detail)
    }

    pub fn bad_request(detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::BAD_REQUEST, "Bad Request", detail)
    }

    /// A request that is well formed but cannot be done: a value missing or not allowed, a
    /// model that may not run, a tool this server cannot run.
    pub fn unprocessable(detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::UNPROCESSABLE_ENTITY, "Unprocessable Content", detail)
    }

    /// Over a rate limit: try again after `wait`.
    pub fn too_many(wait: std::time::Duration) -> Problem {
        let seconds = wait.as_secs() + 1;
        Problem {
            retry_after: Some(seconds),
            ..Problem::new(
                StatusCode::TOO_MANY_REQUESTS,
                "Too Many Requests",
                format!("over this caller's rate limit: try again in {seconds} s"),
            )
        }
    }

    /// A fault of the server's, not the client's.
    pub fn internal(detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error", detail)
    }
}

impl From<StoreError> for Problem {
    fn from(error: StoreError) -> Problem {
        let detail = error.to_string();
        match error {
            StoreError::NoSuchTool(_)
            | StoreError::NoSuchVersion { .. }
            | StoreError::NoSuchToken(_)
            | StoreError::NoSuchMember(_)
            | StoreError::NoSuchTeam(_)
            | StoreError::NoSuchIntegration(_)
            | StoreError::NoSuchPrice(_)
            | StoreError::NoSuchBudget(_)
            | StoreError::NoSuchConversation(_)
            | StoreError::NoSuchGrant(_) => {
                Problem::new(StatusCode::NOT_FOUND, "Not Found", detail)
            }
            StoreError::GrantsFull => {
                Problem::new(StatusCode::SERVICE_UNAVAILABLE, "Service Unavailable", detail)
            }
            StoreError::BadSlug(_)
            | StoreError::BadName(_)
            | StoreError::BadEmail(_)
            | StoreError::MixedScriptEmail(_)
            | StoreError::BadMemberName(_)
            | StoreError::BadTitle(_)
            | StoreError::ReservedTeam(_)
            | StoreError::TokenAboveMember { .. }
            | StoreError::BadInvite(_)
            | StoreError::BadCursor
            | StoreError::BadIntegration(_)
            | StoreError::BadPrice(_)
            | StoreError::BadBudget(_)
            | StoreError::BadDay(_)
            | StoreError::BadTokenDays(_)
            | StoreError::Backup(_) => Problem::bad_request(detail),
            StoreError::OverBudget(over) => {
                let mut budget = serde_json::to_value(&over.status).unwrap_or_default();
                budget["cost_usd"] = over.cost_usd.into();
                Problem {
                    kind: OVER_BUDGET,
                    budget: Some(Box::new(budget)),
                    ..Problem::new(StatusCode::PAYMENT_REQUIRED, "Over Budget", detail)
                }
            }
            StoreError::TokenExists(_)
            | StoreError::TokenNameClash { .. }
            | StoreError::MemberExists(_)
            | StoreError::TeamExists(_)
            | StoreError::TaggedAhead { .. }
            | StoreError::LastOwner(_)
            | StoreError::IntegrationExists(_)
            | StoreError::KeyChanged(_)
            | StoreError::TeamInUse { .. }
            | StoreError::GrantCodeTaken
            | StoreError::Conflict { .. } => Problem::new(StatusCode::CONFLICT, "Conflict", detail),
            StoreError::TooMany { .. }
            | StoreError::TokensFull(_)
            | StoreError::CollaboratorsFull(_)
            | StoreError::SnapshotsFull(_)
            | StoreError::SnapshotTooLarge(_) => {
                Problem::new(StatusCode::UNPROCESSABLE_ENTITY, "Unprocessable Content", detail)
            }
            StoreError::Rejected(rejection) => Problem {
                diagnostics: Some(rejection.diagnostics),
                ..Problem::new(StatusCode::UNPROCESSABLE_ENTITY, "Unprocessable Content", detail)
            },
            StoreError::Database(_) | StoreError::Migration(_) => {
                tracing::error!("{detail}");
                Problem::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Internal Server Error",
                    "the library's database failed; the server's log says why",
                )
            }
        }
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = serde_json::to_vec(&self).unwrap_or_default();
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/problem+json"));
        if let Some(seconds) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use llmtool_registry::wire::ProblemBody;

    #[test]
    fn the_library_client_reads_every_problem_the_server_writes() {
        let refused = Problem {
            diagnostics: Some(vec![serde_json::json!({"code": "LT101"})]),
            ..Problem::new(StatusCode::UNPROCESSABLE_ENTITY, "Unprocessable Content", "bad file")
        };
        for problem in [refused, Problem::unauthorized(), Problem::bad_request("no")] {
            let written = serde_json::to_vec(&problem).unwrap_or_default();
            let read: ProblemBody = serde_json::from_slice(&written)
                .unwrap_or_else(|error| panic!("{error}: {}", String::from_utf8_lossy(&written)));
            assert_eq!((read.title.as_str(), read.status), (problem.title, problem.status));
            assert_eq!(read.detail, problem.detail);
            assert_eq!(read.diagnostics, problem.diagnostics.unwrap_or_default());
        }
    }
}
