//! Library tools as the functions of the server's runs. A tool named by `{"tool":
//! "registry:SLUG"}` is offered only when the run's caller sees it (the one visibility rule;
//! one they do not see is missing, as on every path), and each call runs it as that caller:
//! admitted, charged and kept like any run of theirs, at most [`MOST_DEPTH`] tools deep.

use std::sync::Arc;

use llmtool_format::model::{FunctionEntry, FunctionSource, Tool, ToolKind};
use llmtool_functions::{Extra, FunctionsError};
use llmtool_providers::functions::{FunctionCall, FunctionHost, Returned};
use llmtool_registry::{Reference, StoreError};
use llmtool_runtime::{Choice, FunctionSources, ParamOverrides, Runtime, Subject};

use crate::ServerState;
use crate::runs::{Ask, RunFor};

/// How many tools deep one run's calls may go (a tool that calls a tool that calls a tool).
pub(crate) const MOST_DEPTH: u8 = 3;

/// Whether `tool` names functions (its runs need the library's sources).
pub(crate) fn names_functions(tool: &Tool) -> bool {
    tool.metadata.as_ref().and_then(|m| m.functions.as_ref()).is_some_and(|f| !f.value.is_empty())
}

/// `runtime` with the library's tools as function sources for `who`.
pub(crate) fn with_library_tools(runtime: &Runtime, state: &ServerState, who: &RunFor) -> Runtime {
    let sources = LibraryTools {
        state: state.clone(),
        who: who.clone(),
        handle: tokio::runtime::Handle::current(),
    };
    runtime.with_function_sources(Arc::new(sources))
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
                "this server has no MCP servers to offer functions from".to_owned(),
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
        let spec = llmtool_functions::tool_spec(&name, &tool);
        let caller = RunFor { depth: self.who.depth + 1, ..self.who.clone() };
        let host = ToolCall {
            state: self.state.clone(),
            who: caller,
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
        let (prompt, inputs) = llmtool_functions::prompt_of(&self.tool, call)?;
        let runs = self.state.runs().cloned().ok_or("this server runs no tools")?;
        let choice = Choice::default();
        let ask = Ask::Prompt {
            tool: &self.tool,
            prompt,
            overrides: ParamOverrides::default(),
            choice: &choice,
        };
        let prepared = Box::pin(runs.prepare(&self.state, &self.who, &self.tags, ask))
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
