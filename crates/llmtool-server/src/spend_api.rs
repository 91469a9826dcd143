//! The Control Center's `/api/v1/spend` and `/api/v1/budgets` routes: what the library's runs
//! spent over a period, whole and by day, team, member, tool and model (as JSON, or the
//! day-by-day lines as CSV); and the budgets, where each stands, set by admins. Admins see
//! everyone's; anyone else their own spend, and the budgets that bound them.

use axum::Json;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse as _, Response};
use axum::routing::{get, put};
use llmtool_registry::{Budget, BudgetStatus, Period, Role, Scope, SpendQuery, SpendReport};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use crate::auth::Caller;
use crate::{Problem, ServerState};

pub(crate) fn routes() -> Router<ServerState> {
    Router::new()
        .route("/spend", get(spend))
        .route("/budgets", get(budgets))
        .route("/budgets/{scope}/{name}", put(set_budget).delete(remove_budget))
}

type Answer<T> = Result<T, Problem>;

/// `GET /spend`: which runs, and how.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct SpendParams {
    /// The first day (`YYYY-MM-DD`, UTC); default: the first of this month.
    from: Option<String>,
    /// The last day, included; default: today.
    to: Option<String>,
    /// One team's runs (admins).
    team: Option<String>,
    /// One member's runs (admins; anyone else sees their own).
    member: Option<String>,
    /// `json` (the default) or `csv` (a line per day, team, member, tool and model).
    format: Option<String>,
}

/// The most days a period may span.
const MOST_DAYS: i32 = 3660;

/// What the runs spent over a period: totals, and by day and team, team, member, tool and
/// model; or, with `format=csv`, the day-by-day lines. Admins see everyone's, anyone else their
/// own.
#[utoipa::path(get, path = "/spend", params(SpendParams), security(("bearer" = [])),
    responses((status = 200, description = "The totals (or, with `format=csv`, `text/csv`)", body = SpendReport), (status = 400, description = "Not a day, or a period backwards or longer than ten years", body = Problem),
        (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn spend(
    State(state): State<ServerState>,
    caller: Caller,
    Query(params): Query<SpendParams>,
) -> Answer<Response> {
    caller.require_token(Role::Viewer)?;
    let today = jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC).date();
    let day = |text: Option<&str>, default: jiff::civil::Date| match text {
        Some(text) => text.parse::<jiff::civil::Date>().map_err(|_| {
            Problem::bad_request(format!("`{text}` is not a day: write it YYYY-MM-DD"))
        }),
        None => Ok(default),
    };
    let from = day(params.from.as_deref(), today.first_of_month())?;
    let last = day(params.to.as_deref(), today)?;
    let span = (last - from).get_days();
    if !(0..=MOST_DAYS).contains(&span) {
        return Err(Problem::bad_request("the period runs from `from` to `to`, at most ten years"));
    }
    let to = last.tomorrow().unwrap_or(last);
    let admin = caller.role.is_some_and(|role| role >= Role::Admin);
    let query = SpendQuery {
        from: from.to_string(),
        to: to.to_string(),
        member: if admin { params.member } else { Some(caller.member.clone()) },
        team: if admin { params.team } else { None },
    };
    if params.format.as_deref() == Some("csv") {
        let rows = state.store.spend_rows(&query).await?;
        let mut writer = csv::Writer::from_writer(Vec::new());
        let header = [
            "day",
            "team",
            "member",
            "tool",
            "model",
            "runs",
            "input_tokens",
            "output_tokens",
            "cost_usd",
        ];
        let written = writer.write_record(header).and_then(|()| {
            rows.iter().try_for_each(|row| {
                writer.write_record([
                    row.day.clone(),
                    row.team.clone(),
                    row.member.clone(),
                    row.tool.clone(),
                    row.model.clone(),
                    row.totals.runs.to_string(),
                    row.totals.input_tokens.to_string(),
                    row.totals.output_tokens.to_string(),
                    format!("{:.6}", row.totals.cost_usd),
                ])
            })
        });
        let body = written
            .map_err(|error| error.to_string())
            .and_then(|()| writer.into_inner().map_err(|error| error.to_string()))
            .map_err(Problem::internal)?;
        let name = format!("attachment; filename=\"spend-{from}-{last}.csv\"");
        return Ok((
            [
                (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
                (header::CONTENT_DISPOSITION, name),
            ],
            body,
        )
            .into_response());
    }
    Ok(Json(state.store.spend(&query).await?).into_response())
}

/// Every budget and where its period stands (admins); anyone else, the budgets that bound
/// them: their own and their teams'.
#[utoipa::path(get, path = "/budgets", security(("bearer" = [])),
    responses((status = 200, body = Vec<BudgetStatus>), (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn budgets(
    State(state): State<ServerState>,
    caller: Caller,
) -> Answer<Json<Vec<BudgetStatus>>> {
    caller.require_token(Role::Viewer)?;
    let today = jiff::Timestamp::now().strftime("%Y-%m-%d").to_string();
    let mut statuses = state.store.budget_statuses(&today).await?;
    if caller.role.is_none_or(|role| role < Role::Admin) {
        statuses.retain(|status| match status.budget.scope {
            Scope::Member => status.budget.name == caller.member,
            Scope::Team => caller.teams.contains(&status.budget.name),
        });
    }
    Ok(Json(statuses))
}

/// `PUT /budgets/{scope}/{name}`: the limit.
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct BudgetBody {
    /// `day`, `week` (from Monday) or `month` (the default), in UTC.
    period: Option<Period>,
    limit_usd: f64,
    /// The share of the limit past which runs come with a warning (default 0.8).
    warn_at: Option<f64>,
    /// Whether a run that would pass the limit is refused (the default), or only warned of.
    hard: Option<bool>,
}

fn scope_of(scope: &str) -> Answer<Scope> {
    Scope::parse(scope)
        .ok_or_else(|| Problem::bad_request(format!("`{scope}` is not `team` or `member`")))
}

/// Set the budget of a team or a member.
#[utoipa::path(put, path = "/budgets/{scope}/{name}", params(("scope" = String, Path, description = "`team` or `member`"), ("name" = String, Path, description = "The team's name, or the member's e-mail")),
    request_body = BudgetBody, security(("bearer" = [])),
    responses((status = 204, description = "Set"), (status = 404, description = "No such team or member", body = Problem), (status = 400, description = "Not a budget", body = Problem),
        (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn set_budget(
    State(state): State<ServerState>,
    caller: Caller,
    Path((scope, name)): Path<(String, String)>,
    Json(body): Json<BudgetBody>,
) -> Answer<StatusCode> {
    caller.require_token(Role::Admin)?;
    let budget = Budget {
        scope: scope_of(&scope)?,
        name,
        period: body.period.unwrap_or(Period::Month),
        limit_usd: body.limit_usd,
        warn_at: body.warn_at.unwrap_or(0.8),
        hard: body.hard.unwrap_or(true),
        updated_at: String::new(),
    };
    caller.acting(&state).set_budget(&budget).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Remove the budget of a team or a member.
#[utoipa::path(delete, path = "/budgets/{scope}/{name}", params(("scope" = String, Path, description = "`team` or `member`"), ("name" = String, Path, description = "The team's name, or the member's e-mail")),
    security(("bearer" = [])),
    responses((status = 204, description = "Removed"), (status = 404, description = "No such budget", body = Problem), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn remove_budget(
    State(state): State<ServerState>,
    caller: Caller,
    Path((scope, name)): Path<(String, String)>,
) -> Answer<StatusCode> {
    caller.require_token(Role::Admin)?;
    caller.acting(&state).remove_budget(scope_of(&scope)?, &name).await?;
    Ok(StatusCode::NO_CONTENT)
}
