//! MCP servers as the function sources of a run: a server the operator configured
//! (`[mcp_servers.NAME]`: a program over stdio, or a Streamable HTTP address), reached only
//! when a run of a tool that names one of its functions starts, never because a tool file
//! asked for a program. The functions' schemas come from the server's `tools/list`; each call
//! is its `tools/call`, the text of the answer given to the model.

use std::collections::BTreeMap;
use std::process::Stdio;

use llmtool_providers::functions::{FunctionCall, FunctionSpec, Returned};
use rmcp_client::ServiceExt as _;
use rmcp_client::model::{CallToolRequestParams, Tool};
use rmcp_client::service::{RoleClient, RunningService};
use rmcp_client::transport::StreamableHttpClientTransport;
use rmcp_client::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::sync::OnceCell;

/// How long a server has to answer `initialize`, and then `tools/list`.
const CONNECT_TIME: std::time::Duration = std::time::Duration::from_secs(30);

/// How to reach a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// A program and its arguments, with its environment, spoken to over stdio.
    Command { argv: Vec<String>, env: BTreeMap<String, String> },
    /// A Streamable HTTP server, with a bearer token.
    Http { url: String, token: Option<String> },
}

/// An MCP server a run may use: how to reach it, and, once reached, the session (shared by the
/// run's calls; the program stops when the run's functions are dropped).
pub struct McpServer {
    pub name: String,
    reach: Reach,
    session: OnceCell<RunningService<RoleClient, ()>>,
    /// A stdio server's program: killed when the run's functions are dropped.
    program: std::sync::Mutex<Option<tokio::process::Child>>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        f.debug_struct("McpServer").field("name", &self.name).finish_non_exhaustive()
    }
}

impl McpServer {
    pub fn new(name: &str, reach: Reach) -> McpServer {
        McpServer {
            name: name.to_owned(),
            reach,
            session: OnceCell::new(),
            program: std::sync::Mutex::new(None),
        }
    }

    /// A fresh server of the same reach, for one run (its own session).
    #[must_use]
    pub fn fresh(&self) -> McpServer {
        McpServer::new(&self.name, self.reach.clone())
    }

    async fn session(&self) -> Result<&RunningService<RoleClient, ()>, String> {
        self.session
            .get_or_try_init(|| async {
                let said = |e: &dyn std::fmt::Display| {
                    format!("the MCP server `{}` cannot be reached: {e}", self.name)
                };
                match &self.reach {
                    Reach::Command { argv, env } => {
                        let (program, arguments) = argv.split_first().ok_or_else(|| {
                            format!("the MCP server `{}` has no command", self.name)
                        })?;
                        let mut command = tokio::process::Command::new(program);
                        command
                            .args(arguments)
                            .env_clear()
                            .envs(std::env::var_os("PATH").map(|path| ("PATH", path)))
                            .envs(env)
                            .stdin(Stdio::piped())
                            .stdout(Stdio::piped())
                            .stderr(Stdio::null())
                            .kill_on_drop(true);
                        let mut child = command.spawn().map_err(|e| said(&e))?;
                        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take())
                        else {
                            return Err(said(&"no standard input or output"));
                        };
                        // Kept here, so that it is killed when the run is over.
                        if let Ok(mut program) = self.program.lock() {
                            *program = Some(child);
                        }
                        let connected = ().serve((stdout, stdin));
                        tokio::time::timeout(CONNECT_TIME, connected)
                            .await
                            .map_err(|_| said(&"it did not answer `initialize` in time"))?
                            .map_err(|e| said(&e))
                    }
                    Reach::Http { url, token } => {
                        let mut config =
                            StreamableHttpClientTransportConfig::with_uri(url.as_str());
                        if let Some(token) = token {
                            config = config.auth_header(token.clone());
                        }
                        let transport = StreamableHttpClientTransport::from_config(config);
                        tokio::time::timeout(CONNECT_TIME, ().serve(transport))
                            .await
                            .map_err(|_| said(&"it did not answer `initialize` in time"))?
                            .map_err(|e| said(&e))
                    }
                }
            })
            .await
    }

    /// The specs of the functions `names` of this server, from its `tools/list`; an error
    /// names one it does not have.
    pub async fn specs(&self, names: &[String]) -> Result<Vec<FunctionSpec>, String> {
        let session = self.session().await?;
        let listed = tokio::time::timeout(CONNECT_TIME, session.list_all_tools());
        let tools: Vec<Tool> = listed
            .await
            .map_err(|_| format!("the MCP server `{}` did not list its tools in time", self.name))?
            .map_err(|e| format!("the MCP server `{}` did not list its tools: {e}", self.name))?;
        names
            .iter()
            .map(|name| {
                let tool =
                    tools.iter().find(|tool| tool.name == name.as_str()).ok_or_else(|| {
                        format!("the MCP server `{}` has no function `{name}`", self.name)
                    })?;
                Ok(FunctionSpec {
                    name: name.clone(),
                    description: tool.description.as_deref().unwrap_or_default().to_owned(),
                    parameters: serde_json::Value::Object((*tool.input_schema).clone()),
                })
            })
            .collect()
    }

    /// `call` as this server's `tools/call`: the text of its answer, failed when the server
    /// says the call failed.
    pub async fn call(&self, call: &FunctionCall) -> Returned {
        let arguments = match call.arguments() {
            Ok(arguments) => arguments,
            Err(reason) => return Returned::failed(reason),
        };
        let session = match self.session().await {
            Ok(session) => session,
            Err(reason) => return Returned::failed(reason),
        };
        let asked = CallToolRequestParams::new(call.name.clone()).with_arguments(arguments);
        match session.call_tool(asked).await {
            Ok(result) => {
                let mut texts: Vec<String> = result
                    .content
                    .iter()
                    .filter_map(|block| block.as_text().map(|text| text.text.clone()))
                    .collect();
                if texts.is_empty()
                    && let Some(structured) = &result.structured_content
                {
                    texts.push(structured.to_string());
                }
                let text = texts.join("\n");
                if result.is_error == Some(true) {
                    Returned::failed(text)
                } else {
                    Returned::ok(text)
                }
            }
            Err(error) => {
                Returned::failed(format!("the MCP server `{}` failed the call: {error}", self.name))
            }
        }
    }
}
