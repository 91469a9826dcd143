//! `GET /api/v1/audit`: the audit log, newest first, for owners and admins: who changed what,
//! when, from where, and what it was before and after.

use axum::Json;
use axum::extract::{Query, State};
use llmtool_registry::{AuditPage, AuditQuery, Role, StoreError};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::auth::Caller;
use crate::{Problem, ServerState};

/// `GET /audit`: which records, and where a page starts.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct AuditParams {
    /// Only the changes of this actor (a token's name, a member's e-mail, `cli:USER`).
    actor: Option<String>,
    /// Only this kind of change (`member.edit`, `tool.publish`, `integration.add`, ...).
    action: Option<String>,
    /// Only the changes to this (an e-mail, a team, a slug, a token's name).
    target: Option<String>,
    /// Only the changes at or after this: RFC 3339 with an offset, a date (its midnight in
    /// UTC), or a span back from now (`30m`, `24h`, `7d`).
    since: Option<String>,
    /// The `next` of the page before.
    cursor: Option<String>,
    /// Records a page, 1 to 500 (default 100).
    limit: Option<u32>,
}

/// The audit log, newest first, a page at a time (owners and admins).
#[utoipa::path(get, path = "/audit", params(AuditParams), security(("bearer" = [])),
    responses((status = 200, body = AuditPage), (status = 400, description = "A cursor the library did not give, or a `since` that is not a time", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn audit(
    State(state): State<ServerState>,
    caller: Caller,
    Query(params): Query<AuditParams>,
) -> Result<Json<AuditPage>, Problem> {
    caller.require_token(Role::Admin)?;
    let before_id = params
        .cursor
        .as_deref()
        .map(|cursor| cursor.parse::<i64>().map_err(|_| StoreError::BadCursor))
        .transpose()?;
    let since = params.since.as_deref().map(crate::run_api::since_text).transpose()?;
    let query = AuditQuery {
        actor: params.actor,
        action: params.action,
        target: params.target,
        since,
        before_id,
        limit: params.limit.unwrap_or(100),
    };
    Ok(Json(state.store.audit(&query).await?))
}
