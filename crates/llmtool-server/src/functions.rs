//! Library tools as the functions of the server's runs. A tool named by `{"tool":
//! "registry:SLUG"}` is offered only when the run's caller sees it (the one visibility rule;
//! one they do not see is missing, as on every path), and each call runs it as that caller:
//! admitted, charged and kept like any run of theirs, at most [`MOST_DEPTH`] tools deep.

use std::sync::Arc;

use llmtool_format::model::{FunctionEntry, FunctionSource, Tool, ToolKind};
use llmtool_functions::{Database, Engine, Extra, FunctionsError, QueryLimits, Search, Setup};
use llmtool_providers::functions::{FunctionCall, FunctionHost, FunctionSpec, Returned};
use llmtool_registry::{Integration, IntegrationTest, Reference, Role, StoreError};
use llmtool_runtime::{Choice, FunctionSources, ParamOverrides, Runtime, Subject};

use crate::ServerState;
use crate::integrations::is_data;
use crate::runs::{Ask, RunFor};

/// How many tools deep one run's calls may go (a tool that calls a tool that calls a tool).
pub(crate) const MOST_DEPTH: u8 = 3;

/// Whether `tool` names functions (its runs need the library's sources).
pub(crate) fn names_functions(tool: &Tool) -> bool {
    tool.metadata.as_ref().and_then(|m| m.functions.as_ref()).is_some_and(|f| !f.value.is_empty())
}

/// `runtime` offering the functions of a run of the tool `slug` for `who`: the library's tools
/// as `who` sees them, and the database and search integrations assigned to `slug` (for
/// `who`'s teams); never the config file's databases, search engine or MCP servers.
pub(crate) fn with_functions(
    runtime: &Runtime,
    state: &ServerState,
    who: &RunFor,
    slug: &str,
    integrations: &[Integration],
) -> Runtime {
    let sources: Arc<dyn FunctionSources> = Arc::new(LibraryTools {
        state: state.clone(),
        who: who.clone(),
        handle: tokio::runtime::Handle::current(),
    });
    // Only what the admins set up, assigned to this tool: the config file's databases, search
    // engine and MCP servers would reach every team's tools. `fetch_url`'s allowed addresses
    // are the operator's (`[fetch] allow`).
    let data = integrations.iter().filter(|i| is_data(i));
    let fetch_allow = runtime.providers().config.fetch.allow.clone();
    let mut setup = Setup { fetch_allow, ..Setup::default() };
    let serves = |integration: &Integration| {
        integration.enabled
            && integration.tools.iter().any(|tool| tool == slug)
            && (integration.teams.is_empty()
                || who.role >= Role::Admin
                || who.teams.iter().any(|team| integration.teams.contains_key(team)))
    };
    for integration in data.filter(|i| serves(i)) {
        match opened(state, integration) {
            Ok(Opened::Database(database)) => {
                setup.databases.insert(integration.name.clone(), *database);
            }
            Ok(Opened::Search(search)) => {
                setup.search.get_or_insert(search);
            }
            Err(problem) => tracing::warn!("the integration `{}`: {problem}", integration.name),
        }
    }
    runtime.with_functions(setup, Some(sources))
}

/// A database or search integration, its sealed secret opened.
enum Opened {
    Database(Box<Database>),
    Search(Search),
}

/// `integration` ready to serve: its sealed URL or key opened with the server's keyring.
fn opened(state: &ServerState, integration: &Integration) -> Result<Opened, String> {
    let secret = match (&integration.sealed_key, state.keyring()) {
        (None, _) => None,
        (Some(sealed), Some(keyring)) => Some(
            keyring
                .open(sealed, &crate::integrations::key_context(integration))
                .map_err(|error| error.to_string())?,
        ),
        (Some(_), None) => return Err("the server has no integration keys to open it".into()),
    };
    let secret = secret.map(|secret| secret.as_str().to_owned());
    let api = integration.api.as_deref().unwrap_or_default();
    match api {
        "postgres" | "sqlite" => {
            let url = secret.ok_or("no connection URL")?;
            let database = Database::open(&integration.name, &url, QueryLimits::default())?;
            Ok(Opened::Database(Box::new(database)))
        }
        _ => {
            let engine =
                Engine::parse(api).ok_or_else(|| format!("`{api}` is not a search engine"))?;
            Search::new(engine, integration.base_url.as_deref(), secret).map(Opened::Search)
        }
    }
}

/// What a test of a database or search integration finds: `SELECT 1` answered, or a search
/// answered; the database's or engine's own words when not (never the URL or key).
pub(crate) async fn test_data_integration(
    state: &ServerState,
    integration: &Integration,
) -> IntegrationTest {
    let started = std::time::Instant::now();
    let outcome = match opened(state, integration) {
        Ok(Opened::Database(database)) => database.query("SELECT 1 AS ok").await,
        Ok(Opened::Search(search)) => {
            search.hits("llmtool").await.map(|hits| format!("{} results for `llmtool`", hits.len()))
        }
        Err(problem) => Err(problem),
    };
    let (ok, detail) = match outcome {
        Ok(found) => (true, found.chars().take(200).collect()),
        Err(problem) => (false, problem.chars().take(2000).collect()),
    };
    IntegrationTest {
        at: jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        ok,
        detail,
        model: integration.api.clone().unwrap_or_default(),
        latency_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    }
}

/// The library's tools, as the caller `who` sees them.
struct LibraryTools {
    state: ServerState,
    who: RunFor,
    /// The server's runtime: a request is built on a blocking thread, which waits here for the
    /// library to answer.
    handle: tokio::runtime::Handle,
}

impl FunctionSources for LibraryTools {
    fn function(&self, entry: &FunctionEntry) -> Result<Extra, FunctionsError> {
        let Some(FunctionSource::Tool(reference)) = entry.source() else {
            return Err(FunctionsError::Unavailable(
                "only library tools are answered by the library".to_owned(),
            ));
        };
        if self.who.depth >= MOST_DEPTH {
            return Err(FunctionsError::Unavailable(format!(
                "tools call other tools at most {MOST_DEPTH} deep"
            )));
        }
        let named = reference.strip_prefix("registry:").unwrap_or(reference);
        let reference =
            Reference::parse(named).ok_or_else(|| FunctionsError::NotFound(named.to_owned()))?;
        let slug = reference.slug.clone();
        let found = self.handle.block_on(self.state.store.version(&slug, &reference.selector));
        let version = match found {
            Ok(version) if self.who.visibility.sees(&version.tags) => version,
            Ok(_) | Err(StoreError::NoSuchTool(_) | StoreError::NoSuchVersion { .. }) => {
                return Err(FunctionsError::NotFound(slug));
            }
            Err(error) => return Err(FunctionsError::Unavailable(error.to_string())),
        };
        let Some(tool) = llmtool_format::Document::from_text(version.text).tool else {
            return Err(FunctionsError::Unavailable(format!("`{slug}` does not read as a tool")));
        };
        if tool.kind() == ToolKind::Smart {
            return Err(FunctionsError::Unavailable(format!(
                "`{slug}` is a smart tool; smart tools are not offered as functions"
            )));
        }
        let name = entry.offered_name().unwrap_or_else(|| slug.clone());
        let form = llmtool_convert::FunctionTool::from_tool(&tool, Some(&name), &[]).value;
        let spec = FunctionSpec {
            name: form.name,
            description: form.description,
            parameters: form.parameters,
        };
        let caller = RunFor { depth: self.who.depth + 1, ..self.who.clone() };
        let host = ToolCall {
            state: self.state.clone(),
            who: caller,
            slug: slug.clone(),
            path: Reference::pinned(&slug, version.version).path(),
            tags: version.tags,
            tool,
        };
        Ok((spec, Arc::new(host)))
    }
}

/// A call of a library tool: a run of it, as the caller's.
struct ToolCall {
    state: ServerState,
    who: RunFor,
    slug: String,
    /// `registry:SLUG@VERSION`, as the server names what it runs.
    path: String,
    tags: Vec<String>,
    tool: Tool,
}

#[async_trait::async_trait]
impl FunctionHost for ToolCall {
    async fn call(&self, call: &FunctionCall) -> Returned {
        match self.run(call).await {
            Ok(answer) => Returned::ok(answer),
            Err(why) => Returned::failed(why),
        }
    }
}

impl ToolCall {
    async fn run(&self, call: &FunctionCall) -> Result<String, String> {
        let arguments = serde_json::Value::Object(call.arguments()?);
        let (prompt, inputs) = llmtool_convert::prompt_from_arguments(&self.tool, &arguments)?;
        let runs = self.state.runs().cloned().ok_or("this server runs no tools")?;
        let choice = Choice::default();
        let ask = Ask::Prompt {
            tool: &self.tool,
            prompt,
            overrides: ParamOverrides::default(),
            choice: &choice,
        };
        let prepared =
            Box::pin(runs.prepare(&self.state, &self.who, (&self.slug, &self.tags), ask))
                .await
                .map_err(|p| p.detail)?;
        let subject = Subject {
            by: self.who.by.clone(),
            account: Some(prepared.account),
            ..Subject::new("function", Some(self.path.clone()), &self.tool, &inputs)
        };
        let runtime = &prepared.runtime;
        runtime
            .answer_request(&prepared.request, Some(&subject), std::future::pending())
            .await
            .map(|answer| answer.text)
            .map_err(|error| runtime.redact(&error.to_string()).into_owned())
    }
}
