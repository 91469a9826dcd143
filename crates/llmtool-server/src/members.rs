//! The `/api/v1/members` and `/api/v1/teams` routes: the library's people, managed by its
//! owners and admins (only an owner makes, unmakes or removes an owner).

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use llmtool_registry::{Member, MemberEdit, NewMember, Role, Team};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::{Problem, ServerState};

pub(crate) fn routes() -> Router<ServerState> {
    Router::new()
        .route("/members", get(members).post(add_member))
        .route("/members/{email}", get(member).patch(edit_member).delete(remove_member))
        .route("/teams", get(teams).post(create_team))
        .route("/teams/{name}", axum::routing::patch(rename_team).delete(remove_team))
}

type Answer<T> = Result<T, Problem>;

/// The people routes need an admin's role; owners' roles are an owner's to give or take.
fn require_admin(caller: &Caller) -> Answer<()> {
    caller.require_token(Role::Admin)
}

fn require_owner_for(caller: &Caller, roles: &[Option<Role>]) -> Answer<()> {
    if roles.contains(&Some(Role::Owner)) {
        caller.require_token(Role::Owner)?;
    }
    Ok(())
}

/// Every member, by e-mail.
#[utoipa::path(get, path = "/members", security(("bearer" = [])),
    responses((status = 200, body = Vec<Member>), (status = 401, description = "No token, or one the library does not know", body = Problem), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn members(
    State(state): State<ServerState>,
    caller: Caller,
) -> Answer<Json<Vec<Member>>> {
    require_admin(&caller)?;
    Ok(Json(state.store.members().await?))
}

/// One member.
#[utoipa::path(get, path = "/members/{email}", params(("email" = String, Path, description = "The member's e-mail, in any case")), security(("bearer" = [])),
    responses((status = 200, body = Member), (status = 404, description = "No such member", body = Problem), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn member(
    State(state): State<ServerState>,
    caller: Caller,
    Path(email): Path<String>,
) -> Answer<Json<Member>> {
    require_admin(&caller)?;
    Ok(Json(state.store.member(&email).await?))
}

/// Add a member (an owner only by an owner).
#[utoipa::path(post, path = "/members", request_body = NewMember, security(("bearer" = [])),
    responses((status = 201, body = Member), (status = 409, description = "The member exists", body = Problem), (status = 404, description = "A team that does not exist", body = Problem),
        (status = 400, description = "Not an e-mail address, a name or a team's name", body = Problem), (status = 403, description = "Not an admin, or an owner added by an admin", body = Problem)))]
pub(crate) async fn add_member(
    State(state): State<ServerState>,
    caller: Caller,
    Json(body): Json<NewMember>,
) -> Answer<(StatusCode, Json<Member>)> {
    require_admin(&caller)?;
    require_owner_for(&caller, &[Some(body.role)])?;
    state.store.add_members(std::slice::from_ref(&body)).await?;
    Ok((StatusCode::CREATED, Json(state.store.member(&body.email).await?)))
}

/// Change a member's name, role or teams (owners' roles only by an owner; the last owner stays).
#[utoipa::path(patch, path = "/members/{email}", params(("email" = String, Path, description = "The member's e-mail, in any case")), request_body = MemberEdit, security(("bearer" = [])),
    responses((status = 200, body = Member), (status = 404, description = "No such member, or team", body = Problem), (status = 409, description = "The library's last owner", body = Problem),
        (status = 403, description = "Not an admin, or an owner's role changed by an admin", body = Problem)))]
pub(crate) async fn edit_member(
    State(state): State<ServerState>,
    caller: Caller,
    Path(email): Path<String>,
    Json(edit): Json<MemberEdit>,
) -> Answer<Json<Member>> {
    require_admin(&caller)?;
    if edit.role.is_some() {
        let now = state.store.member(&email).await?.role;
        require_owner_for(&caller, &[Some(now), edit.role])?;
    }
    Ok(Json(state.store.edit_member(&email, &edit).await?))
}

/// Remove a member: their tokens are revoked and their sessions end (an owner only by an
/// owner; the last owner stays).
#[utoipa::path(delete, path = "/members/{email}", params(("email" = String, Path, description = "The member's e-mail, in any case")), security(("bearer" = [])),
    responses((status = 204, description = "Removed"), (status = 404, description = "No such member", body = Problem), (status = 409, description = "The library's last owner", body = Problem),
        (status = 403, description = "Not an admin, or an owner removed by an admin", body = Problem)))]
pub(crate) async fn remove_member(
    State(state): State<ServerState>,
    caller: Caller,
    Path(email): Path<String>,
) -> Answer<StatusCode> {
    require_admin(&caller)?;
    require_owner_for(&caller, &[Some(state.store.member(&email).await?.role)])?;
    state.store.remove_member(&email).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A team's name, in a request's body.
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct TeamName {
    name: String,
}

/// Every team, with its members and tools.
#[utoipa::path(get, path = "/teams", security(("bearer" = [])),
    responses((status = 200, body = Vec<Team>), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn teams(
    State(state): State<ServerState>,
    caller: Caller,
) -> Answer<Json<Vec<Team>>> {
    require_admin(&caller)?;
    Ok(Json(state.store.teams().await?))
}

/// Make a team.
#[utoipa::path(post, path = "/teams", request_body = TeamName, security(("bearer" = [])),
    responses((status = 201, description = "Made"), (status = 409, description = "The team exists", body = Problem), (status = 400, description = "Not a team's name (or `all`)", body = Problem), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn create_team(
    State(state): State<ServerState>,
    caller: Caller,
    Json(body): Json<TeamName>,
) -> Answer<StatusCode> {
    require_admin(&caller)?;
    state.store.create_team(&body.name).await?;
    Ok(StatusCode::CREATED)
}

/// Rename a team: its members and its tag on every tool follow.
#[utoipa::path(patch, path = "/teams/{name}", params(("name" = String, Path, description = "The team's name now")), request_body = TeamName, security(("bearer" = [])),
    responses((status = 204, description = "Renamed"), (status = 404, description = "No such team", body = Problem), (status = 409, description = "A team of the new name exists", body = Problem), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn rename_team(
    State(state): State<ServerState>,
    caller: Caller,
    Path(name): Path<String>,
    Json(body): Json<TeamName>,
) -> Answer<StatusCode> {
    require_admin(&caller)?;
    state.store.rename_team(&name, &body.name).await?;
    state.cache().invalidate();
    Ok(StatusCode::NO_CONTENT)
}

/// Remove a team (its tools keep the tag).
#[utoipa::path(delete, path = "/teams/{name}", params(("name" = String, Path, description = "The team's name")), security(("bearer" = [])),
    responses((status = 204, description = "Removed"), (status = 404, description = "No such team", body = Problem), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn remove_team(
    State(state): State<ServerState>,
    caller: Caller,
    Path(name): Path<String>,
) -> Answer<StatusCode> {
    require_admin(&caller)?;
    state.store.remove_team(&name).await?;
    Ok(StatusCode::NO_CONTENT)
}
