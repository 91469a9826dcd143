//! The Control Center's `/api/v1/integrations` and `/api/v1/prices` routes: admins add, test,
//! change and remove the providers' integrations (a key goes in, sealed at once, and never
//! comes out: only its last four characters), and set prices over the shipped table.

use std::collections::BTreeMap;
use std::time::Instant;

use axum::Json;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use llmtool_providers::presets::preset;
use llmtool_registry::{Integration, IntegrationTest, PriceOverride, Role};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Caller;
use crate::integrations::{APIS, DATA_APIS};
use crate::{Problem, ServerState};

pub(crate) fn routes() -> Router<ServerState> {
    Router::new()
        .route("/integrations", get(integrations).post(add_integration))
        .route("/integrations/rotate", post(rotate))
        .route(
            "/integrations/{name}",
            axum::routing::patch(edit_integration).delete(remove_integration),
        )
        .route("/integrations/{name}/test", post(test_integration))
        .route("/prices", get(prices).put(set_price).delete(remove_price))
}

type Answer<T> = Result<T, Problem>;

/// The longest key taken.
const MAX_KEY: usize = 4096;

/// `POST /integrations`: a new integration.
#[derive(Deserialize, ToSchema)]
pub(crate) struct NewIntegration {
    /// A provider llmtool knows (`openai`, `anthropic`, `gemini`, `groq`, `local`...), or a
    /// name of yours for another server (then `api` and `base_url` are needed).
    name: String,
    /// `openai`, `anthropic` or `gemini`: the API a server of your own speaks.
    api: Option<String>,
    base_url: Option<String>,
    /// The API key: sealed at once, never returned.
    key: Option<String>,
    /// The models runs may use (empty: every model of the provider).
    #[serde(default)]
    models: Vec<String>,
    #[serde(default = "enabled")]
    enabled: bool,
    /// Which models each team may use (empty list: all of the integration's); none named:
    /// every team.
    #[serde(default)]
    teams: BTreeMap<String, Vec<String>>,
    /// A database or search integration's tools, by slug (see [`Integration::tools`]).
    #[serde(default)]
    tools: Vec<String>,
}

fn enabled() -> bool {
    true
}

/// Never the key.
impl std::fmt::Debug for NewIntegration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewIntegration").field("name", &self.name).finish_non_exhaustive()
    }
}

/// Never the key.
impl std::fmt::Debug for IntegrationEdit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntegrationEdit").field("models", &self.models).finish_non_exhaustive()
    }
}

/// `PATCH /integrations/{name}`: what to change (each field given replaces the old).
#[derive(Default, Deserialize, ToSchema)]
pub(crate) struct IntegrationEdit {
    api: Option<String>,
    base_url: Option<String>,
    /// A new key (sealed at once, never returned).
    key: Option<String>,
    models: Option<Vec<String>>,
    enabled: Option<bool>,
    teams: Option<BTreeMap<String, Vec<String>>>,
    tools: Option<Vec<String>>,
}

/// Every integration, by name (their keys are never returned: only their last four
/// characters).
#[utoipa::path(get, path = "/integrations", security(("bearer" = [])),
    responses((status = 200, body = Vec<Integration>), (status = 401, description = "No token, or one the library does not know", body = Problem), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn integrations(
    State(state): State<ServerState>,
    caller: Caller,
) -> Answer<Json<Vec<Integration>>> {
    caller.require_token(Role::Admin)?;
    Ok(Json(state.store.integrations().await?))
}

/// Add an integration: its key is sealed with the server's integration key before it is
/// stored.
#[utoipa::path(post, path = "/integrations", request_body = NewIntegration, security(("bearer" = [])),
    responses((status = 201, body = Integration), (status = 409, description = "An integration of this name exists", body = Problem),
        (status = 400, description = "Not a provider, API, address or key; or a key and no integration keys on the server", body = Problem), (status = 404, description = "A team that does not exist", body = Problem),
        (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn add_integration(
    State(state): State<ServerState>,
    caller: Caller,
    Json(body): Json<NewIntegration>,
) -> Answer<(StatusCode, Json<Integration>)> {
    caller.require_token(Role::Admin)?;
    if find(&state, &body.name).await?.is_some() {
        return Err(Problem::new(
            StatusCode::CONFLICT,
            "Conflict",
            format!("an integration `{}` exists: change it, or remove it first", body.name),
        ));
    }
    let mut integration = Integration {
        name: body.name,
        api: body.api,
        base_url: body.base_url,
        sealed_key: None,
        key_hint: None,
        models: body.models,
        enabled: body.enabled,
        teams: body.teams,
        created_at: String::new(),
        updated_at: String::new(),
        last_test: None,
        tools: body.tools,
    };
    check(&integration)?;
    if let Some(key) = body.key {
        seal(&state, &mut integration, &key)?;
    }
    caller.acting(&state).put_integration(&integration, true).await?;
    let stored = find(&state, &integration.name).await?.ok_or_else(|| Problem::internal("gone"))?;
    Ok((StatusCode::CREATED, Json(stored)))
}

/// Change an integration: its API, address, key, models, whether it is enabled, its teams.
#[utoipa::path(patch, path = "/integrations/{name}", params(("name" = String, Path, description = "The integration's name")), request_body = IntegrationEdit, security(("bearer" = [])),
    responses((status = 200, body = Integration), (status = 404, description = "No such integration, or team", body = Problem),
        (status = 400, description = "Not an API, address or key", body = Problem), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn edit_integration(
    State(state): State<ServerState>,
    caller: Caller,
    Path(name): Path<String>,
    Json(edit): Json<IntegrationEdit>,
) -> Answer<Json<Integration>> {
    caller.require_token(Role::Admin)?;
    let Some(mut integration) = find(&state, &name).await? else {
        return Err(llmtool_registry::StoreError::NoSuchIntegration(name).into());
    };
    let moved = (edit.api.is_some() && edit.api != integration.api)
        || (edit.base_url.is_some() && edit.base_url != integration.base_url);
    if moved && integration.sealed_key.is_some() && edit.key.is_none() {
        return Err(Problem::bad_request(
            "a key is sealed for its integration's API and address: give the key again to change them",
        ));
    }
    if edit.api.is_some() {
        integration.api = edit.api;
    }
    if edit.base_url.is_some() {
        integration.base_url = edit.base_url;
    }
    if let Some(models) = edit.models {
        integration.models = models;
    }
    if let Some(enabled) = edit.enabled {
        integration.enabled = enabled;
    }
    if let Some(teams) = edit.teams {
        integration.teams = teams;
    }
    if let Some(tools) = edit.tools {
        integration.tools = tools;
    }
    check(&integration)?;
    if let Some(key) = edit.key {
        seal(&state, &mut integration, &key)?;
    }
    caller.acting(&state).put_integration(&integration, false).await?;
    let stored = find(&state, &name).await?.ok_or_else(|| Problem::internal("gone"))?;
    Ok(Json(stored))
}

/// Remove an integration (and its key).
#[utoipa::path(delete, path = "/integrations/{name}", params(("name" = String, Path, description = "The integration's name")), security(("bearer" = [])),
    responses((status = 204, description = "Removed"), (status = 404, description = "No such integration", body = Problem), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn remove_integration(
    State(state): State<ServerState>,
    caller: Caller,
    Path(name): Path<String>,
) -> Answer<StatusCode> {
    caller.require_token(Role::Admin)?;
    caller.acting(&state).remove_integration(&name).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /integrations/{name}/test`: the model to ask.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub(crate) struct TestBody {
    /// Default: the integration's first model, else its provider's default model.
    model: Option<String>,
}

/// Test an integration (enabled or not): one short request to one of its models; what it
/// found is kept with the integration. A test is not a run of the library's: it is in no
/// spend and no budget.
#[utoipa::path(post, path = "/integrations/{name}/test", params(("name" = String, Path, description = "The integration's name")), request_body = TestBody, security(("bearer" = [])),
    responses((status = 200, description = "What the test found (`ok` false: the provider's error, with no key in it)", body = IntegrationTest),
        (status = 404, description = "No such integration", body = Problem), (status = 422, description = "No model to test with", body = Problem),
        (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn test_integration(
    State(state): State<ServerState>,
    caller: Caller,
    Path(name): Path<String>,
    body: Option<Json<TestBody>>,
) -> Answer<Json<IntegrationTest>> {
    caller.require_token(Role::Admin)?;
    let Some(runs) = state.runs().cloned() else {
        return Err(Problem::new(StatusCode::NOT_FOUND, "Not Found", "this server runs no tools"));
    };
    let Some(integration) = find(&state, &name).await? else {
        return Err(llmtool_registry::StoreError::NoSuchIntegration(name).into());
    };
    if crate::integrations::is_data(&integration) {
        if let Err(limited) = state.limiter.take(&caller.limit_key).await {
            return Err(Problem::too_many(limited));
        }
        let test = crate::functions::test_data_integration(&state, &integration).await;
        state.store.record_integration_test(&name, &test).await?;
        return Ok(Json(test));
    }
    let asked = body.and_then(|Json(body)| body.model);
    let model = asked
        .or_else(|| integration.models.first().cloned())
        .or_else(|| preset(&name).and_then(|p| p.default_model).map(str::to_owned))
        .ok_or_else(|| {
            Problem::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Unprocessable Content",
                format!("`{name}` names no model: give one to test with"),
            )
        })?;
    if let Err(limited) = state.limiter.take(&caller.limit_key).await {
        return Err(Problem::too_many(limited));
    }
    let only = Integration { enabled: true, ..integration };
    let base = runs.runtime.providers();
    let (providers, problems) =
        crate::integrations::providers(base, std::slice::from_ref(&only), &[], state.keyring());
    let started = Instant::now();
    let outcome = match problems.into_iter().next() {
        Some(problem) => Err(problem),
        None => ping(&runs.runtime.with_providers(providers), &name, &model).await,
    };
    let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let (ok, detail) = match outcome {
        Ok(answer) => (true, answer.chars().take(200).collect()),
        Err(problem) => (false, problem.chars().take(2000).collect()),
    };
    let at = jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let test = IntegrationTest { at, ok, detail, model, latency_ms };
    state.store.record_integration_test(&name, &test).await?;
    Ok(Json(test))
}

/// One minimal request to `model` of `provider` on `runtime`: its answer, or what went wrong
/// (with every key hidden).
async fn ping(
    runtime: &llmtool_runtime::Runtime,
    provider: &str,
    model: &str,
) -> Result<String, String> {
    let text = serde_json::json!({
        "model_prompt": "Reply with the single word: pong",
        "metadata": {"prompt_name": "Integration test", "parameters": {"max_tokens": 16, "temperature": 0}},
    });
    let Some(tool) = llmtool_format::Document::from_text(text.to_string()).tool else {
        return Err("the test's tool does not read".into());
    };
    let choice = llmtool_runtime::Choice {
        model: Some(format!("{provider}/{model}")),
        provider: Some(provider.to_owned()),
    };
    let shown = |error: llmtool_runtime::RunError| runtime.redact(&error.to_string()).into_owned();
    let request = runtime
        .request_off_thread(
            &tool,
            "Reply with the single word: pong".into(),
            llmtool_runtime::ParamOverrides::default(),
            &choice,
        )
        .await
        .map_err(shown)?;
    let answer = runtime.answer_request(&request, None, std::future::pending()).await;
    answer.map(|answer| answer.text).map_err(shown)
}

/// What a rotation did.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Rotated {
    /// The integrations whose keys were sealed again, with the current integration key
    /// (`slack` for the Slack app's secrets).
    resealed: Vec<String>,
    /// The id of the current integration key.
    key_id: String,
}

/// Seal every integration's key with the current integration key (after a new key was put
/// first in the keyring); the old key may then be taken out.
#[utoipa::path(post, path = "/integrations/rotate", security(("bearer" = [])),
    responses((status = 200, body = Rotated), (status = 409, description = "The server has no integration keys, or a key does not open", body = Problem), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn rotate(
    State(state): State<ServerState>,
    caller: Caller,
) -> Answer<Json<Rotated>> {
    caller.require_token(Role::Admin)?;
    let keyring = state.keyring().ok_or_else(no_keyring)?;
    let mut resealed = Vec::new();
    for integration in state.store.integrations().await? {
        let Some(sealed) = &integration.sealed_key else { continue };
        if keyring.is_current(sealed) {
            continue;
        }
        let context = crate::integrations::key_context(&integration);
        let key = keyring.open(sealed, &context).map_err(|error| {
            Problem::new(
                StatusCode::CONFLICT,
                "Conflict",
                format!("`{}`: {error}", integration.name),
            )
        })?;
        let again = keyring.seal(&key, &context);
        resealed.push((integration.name.clone(), sealed.clone(), again));
    }
    if !resealed.is_empty() {
        caller.acting(&state).reseal_integrations(&resealed).await?;
    }
    let mut resealed: Vec<String> = resealed.into_iter().map(|(name, ..)| name).collect();
    if crate::slack::install::reseal(&state, &caller, keyring).await? {
        resealed.push("slack".to_owned());
    }
    Ok(Json(Rotated { resealed, key_id: keyring.current().to_owned() }))
}

pub(crate) fn no_keyring() -> Problem {
    Problem::new(
        StatusCode::CONFLICT,
        "Conflict",
        "the server has no integration keys: start it with --integration-keys FILE (or LLMTOOL_INTEGRATION_KEYS)",
    )
}

async fn find(state: &ServerState, name: &str) -> Answer<Option<Integration>> {
    Ok(state.store.integrations().await?.into_iter().find(|i| i.name == name))
}

/// Whether `integration` can run: a provider llmtool knows, or an API and an address; an
/// address that is an `http` or `https` URL.
fn check(integration: &Integration) -> Answer<()> {
    let known = preset(&integration.name);
    if known.is_some_and(|p| p.api == llmtool_providers::ApiKind::Vertex) {
        return Err(Problem::bad_request(
            "Vertex AI signs in with Google Cloud's credentials, not a key: configure it in the server's config file",
        ));
    }
    if crate::integrations::is_data(integration) {
        return check_data(integration);
    }
    if let Some(api) = &integration.api
        && !APIS.contains(&api.as_str())
    {
        return Err(Problem::bad_request(format!(
            "`{api}` is not an API: use one of {}, or {} for a database or search integration",
            APIS.join(", "),
            DATA_APIS.join(", ")
        )));
    }
    if known.is_none() && (integration.api.is_none() || integration.base_url.is_none()) {
        return Err(Problem::bad_request(format!(
            "`{}` is not a provider llmtool knows: give its `api` ({}) and its `base_url`",
            integration.name,
            APIS.join(", ")
        )));
    }
    if let Some(url) = &integration.base_url {
        let parsed =
            reqwest::Url::parse(url).ok().filter(|u| matches!(u.scheme(), "http" | "https"));
        if parsed.is_none_or(|u| {
            u.host_str().is_none() || !u.username().is_empty() || u.password().is_some()
        }) {
            return Err(Problem::bad_request(
                "`base_url` is an http or https address, with no user or password in it",
            ));
        }
    }
    Ok(())
}

/// Whether a database or search integration can serve: a name a tool can give (a database's
/// is the `database` of `query_database`), a `SearXNG` instance's address, tools that are
/// slugs.
fn check_data(integration: &Integration) -> Answer<()> {
    let api = integration.api.as_deref().unwrap_or_default();
    if !llmtool_format::naming::is_portable(&integration.name) {
        return Err(Problem::bad_request(format!(
            "`{}` cannot name a database or search integration: letters, digits, `_` and `-`",
            integration.name
        )));
    }
    if api == "searxng" && integration.base_url.is_none() {
        return Err(Problem::bad_request("a SearXNG integration needs its instance's `base_url`"));
    }
    if matches!(api, "postgres" | "sqlite") && integration.base_url.is_some() {
        return Err(Problem::bad_request(
            "a database's address is its connection URL, given as its `key` (sealed at once)",
        ));
    }
    if !integration.models.is_empty() {
        return Err(Problem::bad_request(
            "a database or search integration has no models: assign it to `tools`",
        ));
    }
    if let Some(tool) = integration.tools.iter().find(|t| !llmtool_registry::is_slug(t)) {
        return Err(Problem::bad_request(format!("`{tool}` is not a tool's slug")));
    }
    if let Some(url) = &integration.base_url {
        let parsed =
            reqwest::Url::parse(url).ok().filter(|u| matches!(u.scheme(), "http" | "https"));
        if parsed.is_none_or(|u| u.host_str().is_none() || !u.username().is_empty()) {
            return Err(Problem::bad_request("`base_url` is an http or https address"));
        }
    }
    Ok(())
}

/// Seals `key` into `integration` with the current integration key, and keeps its hint.
fn seal(state: &ServerState, integration: &mut Integration, key: &str) -> Answer<()> {
    let key = key.trim();
    if key.is_empty() || key.len() > MAX_KEY || key.contains(char::is_control) {
        return Err(Problem::bad_request("a key is some text on one line, at most 4096 bytes"));
    }
    let keyring = state.keyring().ok_or_else(no_keyring)?;
    integration.sealed_key =
        Some(keyring.seal(key, &crate::integrations::key_context(integration)));
    // The last four characters tell keys apart; a short key shows none of itself, and a
    // database's URL none at all (its end may be a password).
    let count = key.chars().count();
    integration.key_hint = (count >= 16 && !crate::integrations::is_data(integration))
        .then(|| key.chars().skip(count - 4).collect());
    Ok(())
}

/// `DELETE /prices`: which price.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct PriceParams {
    /// `provider/model`, or `*` for the markup on every model.
    model: String,
}

/// A price in US dollars per million tokens (and, for an image model, per picture).
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
pub(crate) struct PerMillion {
    input: f64,
    cached_input: Option<f64>,
    output: f64,
    batch_input: Option<f64>,
    batch_output: Option<f64>,
    /// An image model's picture tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    image_output: Option<f64>,
    /// US dollars per picture (not per million): what an image tool's run whose answer counts
    /// no output tokens is charged for each picture.
    #[serde(skip_serializing_if = "Option::is_none")]
    per_image: Option<f64>,
}

impl PerMillion {
    fn of(price: &llmtool_providers::pricing::Price) -> PerMillion {
        let million = |per_token: f64| (per_token * 1_000_000.0 * 1e6).round() / 1e6;
        PerMillion {
            input: million(price.input),
            cached_input: price.cached_input.map(million),
            output: million(price.output),
            batch_input: price.batch_input.map(million),
            batch_output: price.batch_output.map(million),
            image_output: price.image_output.map(million),
            per_image: price.per_image.map(|each| (each * 1e6).round() / 1e6),
        }
    }
}

/// One model's prices.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ModelPrice {
    /// `provider/model`.
    model: String,
    /// The shipped table's price; none for a model it does not know.
    shipped: Option<PerMillion>,
    /// The admins' price of the model, if they set one.
    #[serde(rename = "override")]
    set: Option<PriceOverride>,
    /// What runs are charged: the admins' price (else the table's), with the markup.
    effective: Option<PerMillion>,
    /// Where `effective` comes from.
    source: Option<String>,
}

/// The prices of the models runs may use, and where they come from.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Prices {
    /// The shipped table: its package, version, and the day it was refreshed.
    table: String,
    refreshed: String,
    /// The markup on every model, in percent.
    markup_percent: Option<f64>,
    models: Vec<ModelPrice>,
}

/// The prices of every model runs may use (the enabled integrations' models, else the
/// server's), and of every model the admins priced.
#[utoipa::path(get, path = "/prices", security(("bearer" = [])),
    responses((status = 200, body = Prices), (status = 401, description = "No token, or one the library does not know", body = Problem)))]
pub(crate) async fn prices(
    State(state): State<ServerState>,
    caller: Caller,
) -> Answer<Json<Prices>> {
    caller.require_token(Role::Viewer)?;
    let Some(runs) = state.runs().cloned() else {
        return Err(Problem::new(StatusCode::NOT_FOUND, "Not Found", "this server runs no tools"));
    };
    let overrides = state.store.price_overrides().await?;
    let (runtime, integrations) = runs.runtime_now(&state).await?;
    let shipped = runs.runtime.providers().price_table();
    let effective = runtime.providers().price_table();
    let mut models: Vec<String> = if integrations.is_empty() {
        let targets = runtime.allowed_targets().into_iter();
        targets.map(|t| format!("{}/{}", t.endpoint.provider, t.model)).collect()
    } else {
        integrations
            .iter()
            .filter(|i| i.enabled)
            .flat_map(|i| i.models.iter().map(move |m| format!("{}/{m}", i.name)))
            .collect()
    };
    let admin = caller.role.is_some_and(|role| role >= Role::Admin);
    if admin {
        models.extend(overrides.iter().filter(|p| p.model != "*").map(|p| p.model.clone()));
    } else {
        // A member sees the prices of what they may run, without the admins' notes.
        let role = caller.role.unwrap_or(Role::Viewer);
        models.retain(|model| {
            let (provider, name) = model.split_once('/').unwrap_or((model, ""));
            crate::integrations::gate(&integrations, provider, name, role, &caller.teams).is_ok()
        });
    }
    models.sort();
    models.dedup();
    let lines = models
        .into_iter()
        .map(|model| {
            let (provider, name) = model.split_once('/').unwrap_or((&model, ""));
            let now = effective.lookup(provider, name);
            ModelPrice {
                shipped: shipped.lookup(provider, name).map(|entry| PerMillion::of(&entry.price)),
                set: overrides
                    .iter()
                    .find(|p| p.model == model)
                    .cloned()
                    .map(|set| if admin { set } else { PriceOverride { note: None, ..set } }),
                effective: now.as_ref().map(|entry| PerMillion::of(&entry.price)),
                source: now.map(|entry| entry.source),
                model,
            }
        })
        .collect();
    let source = shipped.source();
    Ok(Json(Prices {
        table: format!("{} {}", source.package, source.version),
        refreshed: source.refreshed.clone(),
        markup_percent: overrides.iter().find(|p| p.model == "*").and_then(|p| p.markup_percent),
        models: lines,
    }))
}

/// Set a model's price over the table (or, for `*`, a markup on every model): each cost
/// figure from then on uses it.
#[utoipa::path(put, path = "/prices", request_body = PriceOverride, security(("bearer" = [])),
    responses((status = 204, description = "Set"), (status = 400, description = "Not a price", body = Problem), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn set_price(
    State(state): State<ServerState>,
    caller: Caller,
    Json(price): Json<PriceOverride>,
) -> Answer<StatusCode> {
    caller.require_token(Role::Admin)?;
    caller.acting(&state).set_price_override(&price).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Remove an admin's price: the table's is charged again.
#[utoipa::path(delete, path = "/prices", params(PriceParams), security(("bearer" = [])),
    responses((status = 204, description = "Removed"), (status = 404, description = "No price of the model is set", body = Problem), (status = 403, description = "Not an admin", body = Problem)))]
pub(crate) async fn remove_price(
    State(state): State<ServerState>,
    caller: Caller,
    Query(params): Query<PriceParams>,
) -> Answer<StatusCode> {
    caller.require_token(Role::Admin)?;
    caller.acting(&state).remove_price_override(&params.model).await?;
    Ok(StatusCode::NO_CONTENT)
}
