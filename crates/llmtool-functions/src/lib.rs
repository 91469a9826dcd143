//! The functions a tool offers a model during a run, each bounded and governed: `fetch_url`
//! (a page's text, public addresses only unless the operator allows more), `web_search`
//! (through the operator's search engine), `query_database` and `database_schema` (a named
//! database, read-only by the database's own rule). [`offer`] turns a tool's
//! `metadata.functions` into what the model is offered and the [`Toolbox`] that answers its
//! calls; nothing is offered that the tool did not name.

mod address;
mod database;
mod fetch;
mod mcp;
mod postgres_text;
mod search;

use std::collections::BTreeMap;
use std::sync::Arc;

use llmtool_format::model::{FunctionEntry, FunctionSource};
use llmtool_providers::functions::{FunctionCall, FunctionHost, FunctionSpec, Returned};
use serde_json::{Value, json};

pub use address::private_kind;
pub use database::{Database, QueryLimits};
pub use fetch::{FetchLimits, Fetcher};
pub use mcp::{McpServer, Reach};
pub use search::{Engine, Hit, Search};

/// Why a tool's functions cannot be offered: the run does not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FunctionsError {
    #[error(
        "the tool queries database `{0}`, which is not configured (add `[databases.{0}]` with its `url` to the config file, or a database integration on the server)"
    )]
    UnknownDatabase(String),
    #[error(
        "the tool searches the web, and no search engine is configured (add `[search]` to the config file, or a search integration on the server)"
    )]
    NoSearch,
    #[error("`{0}` is not a built-in function (see `llmtool check`)")]
    UnknownBuiltin(String),
    #[error("the function entry {0} is incomplete (see `llmtool check`)")]
    Incomplete(usize),
    #[error("{0}")]
    Unavailable(String),
    /// A library tool that does not exist, or that the run's caller does not see (the same
    /// answer for both).
    #[error("no tool `{0}` in the library")]
    NotFound(String),
    #[error("in the config file: {0}")]
    Config(String),
}

/// What the operator set up for functions: the databases by name, the addresses `fetch_url`
/// may reach besides public ones, the search engine.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    pub databases: BTreeMap<String, Database>,
    pub fetch_allow: Vec<String>,
    pub search: Option<Search>,
    /// The MCP servers a tool may name (`{"mcp": NAME, ...}`), by name.
    pub mcp_servers: BTreeMap<String, Arc<McpServer>>,
}

impl Setup {
    /// The setup the config file describes (`[databases.NAME]`, `[fetch]`, `[search]`), with
    /// URLs and keys read from the environment where the file names a variable.
    pub fn from_config(config: &llmtool_config::Config) -> Result<Setup, String> {
        let mut databases = BTreeMap::new();
        for (name, database) in &config.databases {
            let url = match (&database.url, &database.url_env) {
                (Some(url), _) => url.clone(),
                (None, Some(variable)) => std::env::var(variable).map_err(|_| {
                    format!("database `{name}`: the environment variable `{variable}` is not set")
                })?,
                (None, None) => return Err(format!("database `{name}` has no `url`")),
            };
            let defaults = QueryLimits::default();
            let limits = QueryLimits {
                rows: database.max_rows.unwrap_or(defaults.rows),
                time: database
                    .timeout_seconds
                    .map_or(defaults.time, |s| std::time::Duration::from_secs(u64::from(s))),
                ..defaults
            };
            databases.insert(name.clone(), Database::open(name, &url, limits)?);
        }
        let search = match &config.search {
            Some(search) => {
                let engine = Engine::parse(&search.engine).ok_or_else(|| {
                    format!("`{}` is not a search engine: searxng, brave or tavily", search.engine)
                })?;
                let key = match &search.key_env {
                    Some(variable) => Some(std::env::var(variable).map_err(|_| {
                        format!("the search key's variable `{variable}` is not set")
                    })?),
                    None => None,
                };
                Some(Search::new(engine, search.url.as_deref(), key)?)
            }
            None => None,
        };
        let mut mcp_servers = BTreeMap::new();
        for (name, server) in &config.mcp_servers {
            let reach = match (&server.url, server.command.is_empty()) {
                (Some(url), true) => {
                    let token = match &server.token_env {
                        Some(variable) => Some(std::env::var(variable).map_err(|_| {
                            format!("MCP server `{name}`: the variable `{variable}` is not set")
                        })?),
                        None => None,
                    };
                    Reach::Http { url: url.clone(), token }
                }
                (None, false) => {
                    Reach::Command { argv: server.command.clone(), env: server.env.clone() }
                }
                _ => return Err(format!("MCP server `{name}`: give its `command` or its `url`")),
            };
            mcp_servers.insert(name.clone(), Arc::new(McpServer::new(name, reach)));
        }
        Ok(Setup { databases, fetch_allow: config.fetch.allow.clone(), search, mcp_servers })
    }
}

/// Another source of functions (a library tool), offered by the caller that can reach it: its
/// spec and who answers it.
pub type Extra = (FunctionSpec, Arc<dyn FunctionHost>);

/// Answers a run's calls of the built-in functions its tool named, and of the extras.
pub struct Toolbox {
    fetcher: Option<Fetcher>,
    search: Option<Search>,
    databases: BTreeMap<String, Database>,
    extras: BTreeMap<String, Arc<dyn FunctionHost>>,
    /// The MCP servers of the run (each a session of its own), and the functions named of
    /// each: offered once the run reaches the server.
    mcp: BTreeMap<String, (Arc<McpServer>, Vec<String>)>,
}

impl std::fmt::Debug for Toolbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Toolbox")
            .field("fetch_url", &self.fetcher.is_some())
            .field("web_search", &self.search.is_some())
            .field("databases", &self.databases.keys().collect::<Vec<_>>())
            .field("extras", &self.extras.keys().collect::<Vec<_>>())
            .field("mcp", &self.mcp.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// The functions `entries` name, as offered to the model, and the toolbox that answers them.
/// `extra` answers the entries that are not built-in (`{"tool": ...}`, `{"mcp": ...}`), from
/// what the caller can reach; `None` says why it cannot.
pub fn offer(
    entries: &[FunctionEntry],
    setup: &Setup,
    extra: &mut dyn FnMut(&FunctionEntry) -> Result<Extra, FunctionsError>,
) -> Result<(Vec<FunctionSpec>, Toolbox), FunctionsError> {
    let mut toolbox = Toolbox {
        fetcher: None,
        search: None,
        databases: BTreeMap::new(),
        extras: BTreeMap::new(),
        mcp: BTreeMap::new(),
    };
    let mut specs = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        match entry.source().ok_or(FunctionsError::Incomplete(index + 1))? {
            FunctionSource::Builtin { name: "fetch_url", .. } => {
                if toolbox.fetcher.is_none() {
                    toolbox.fetcher = Some(Fetcher::new(&setup.fetch_allow));
                    specs.push(fetch_url_spec());
                }
            }
            FunctionSource::Builtin { name: "web_search", .. } => {
                if toolbox.search.is_none() {
                    toolbox.search = Some(setup.search.clone().ok_or(FunctionsError::NoSearch)?);
                    specs.push(web_search_spec());
                }
            }
            FunctionSource::Builtin { name: "query_database", database } => {
                let name = database.ok_or(FunctionsError::Incomplete(index + 1))?;
                let found = setup
                    .databases
                    .get(name)
                    .ok_or_else(|| FunctionsError::UnknownDatabase(name.to_owned()))?;
                toolbox.databases.insert(name.to_owned(), found.clone());
            }
            FunctionSource::Builtin { name, .. } => {
                return Err(FunctionsError::UnknownBuiltin(name.to_owned()));
            }
            FunctionSource::Tool(_) => {
                let (spec, host) = extra(entry)?;
                toolbox.extras.insert(spec.name.clone(), host);
                specs.push(spec);
            }
            FunctionSource::Mcp { server, name } => {
                let configured = setup.mcp_servers.get(server).ok_or_else(|| {
                    FunctionsError::Unavailable(format!(
                        "the tool calls the MCP server `{server}`, which is not configured (add `[mcp_servers.{server}]` to the config file)"
                    ))
                })?;
                let (_, names) = toolbox
                    .mcp
                    .entry(server.to_owned())
                    .or_insert_with(|| (Arc::new(configured.fresh()), Vec::new()));
                names.push(name.to_owned());
            }
        }
    }
    if !toolbox.databases.is_empty() {
        specs.extend(database_specs(&toolbox.databases));
    }
    Ok((specs, toolbox))
}

fn fetch_url_spec() -> FunctionSpec {
    FunctionSpec {
        name: "fetch_url".into(),
        description: "Fetch a web page (http or https) and return its readable text.".into(),
        parameters: json!({
            "type": "object",
            "properties": { "url": { "type": "string", "description": "The page's address." } },
            "required": ["url"]
        }),
    }
}

fn web_search_spec() -> FunctionSpec {
    FunctionSpec {
        name: "web_search".into(),
        description: "Search the web; returns the top results' titles, addresses and snippets."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": { "query": { "type": "string", "description": "What to search for." } },
            "required": ["query"]
        }),
    }
}

/// `query_database` and `database_schema`, over the databases the tool named.
fn database_specs(databases: &BTreeMap<String, Database>) -> [FunctionSpec; 2] {
    let names: Vec<&str> = databases.keys().map(String::as_str).collect();
    let described: Vec<String> =
        databases.values().map(|db| format!("`{}` ({})", db.name(), db.engine())).collect();
    let database = json!({ "type": "string", "enum": names, "description": "Which database." });
    [
        FunctionSpec {
            name: "query_database".into(),
            description: format!(
                "Run one read-only SQL statement on a database ({}) and return its rows. Ask \
                 for database_schema first to see the tables and columns.",
                described.join(", ")
            ),
            parameters: json!({
                "type": "object",
                "properties": {
                    "database": database,
                    "sql": { "type": "string", "description": "One SQL statement." }
                },
                "required": ["database", "sql"]
            }),
        },
        FunctionSpec {
            name: "database_schema".into(),
            description: "The tables of a database and their columns, with their types.".into(),
            parameters: json!({
                "type": "object",
                "properties": { "database": database },
                "required": ["database"]
            }),
        },
    ]
}

impl Toolbox {
    fn database(&self, arguments: &serde_json::Map<String, Value>) -> Result<&Database, String> {
        let name = text_argument(arguments, "database").or_else(|error| {
            // With one database, the model need not name it.
            match self.databases.values().next() {
                Some(only) if self.databases.len() == 1 => Ok(only.name()),
                _ => Err(error),
            }
        })?;
        self.databases.get(name).ok_or_else(|| {
            let names: Vec<&str> = self.databases.keys().map(String::as_str).collect();
            format!("no database `{name}` in this run: {}", names.join(", "))
        })
    }
}

fn text_argument<'a>(
    arguments: &'a serde_json::Map<String, Value>,
    name: &str,
) -> Result<&'a str, String> {
    arguments
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("the argument `{name}` (a string) is missing"))
}

#[async_trait::async_trait]
impl FunctionHost for Toolbox {
    async fn discovered(&self) -> Result<Vec<FunctionSpec>, String> {
        self.mcp_specs().await
    }

    async fn call(&self, call: &FunctionCall) -> Returned {
        if let Some(host) = self.extras.get(&call.name) {
            return host.call(call).await;
        }
        if let Some((server, _)) = self.mcp.values().find(|(_, names)| names.contains(&call.name)) {
            return server.call(call).await;
        }
        let result = match call.arguments() {
            Ok(arguments) => self.builtin(&call.name, &arguments).await,
            Err(reason) => Err(reason),
        };
        match result {
            Ok(content) => Returned::ok(content),
            Err(reason) => Returned::failed(reason),
        }
    }
}

impl Toolbox {
    /// The MCP servers' functions, from their `tools/list`, once the run starts.
    async fn mcp_specs(&self) -> Result<Vec<FunctionSpec>, String> {
        let mut specs = Vec::new();
        for (server, names) in self.mcp.values() {
            specs.extend(server.specs(names).await?);
        }
        Ok(specs)
    }

    /// Runs the built-in function `name`; one the run does not offer is refused.
    async fn builtin(
        &self,
        name: &str,
        arguments: &serde_json::Map<String, Value>,
    ) -> Result<String, String> {
        match name {
            "fetch_url" if let Some(fetcher) = &self.fetcher => {
                fetcher.fetch(text_argument(arguments, "url")?).await
            }
            "web_search" if let Some(search) = &self.search => {
                search.search(text_argument(arguments, "query")?).await
            }
            "query_database" if !self.databases.is_empty() => {
                let database = self.database(arguments)?;
                database.query(text_argument(arguments, "sql")?).await
            }
            "database_schema" if !self.databases.is_empty() => {
                self.database(arguments)?.schema().await
            }
            _ => Err(format!("no function named `{name}` is offered in this run")),
        }
    }
}
