//! Library tools as the functions of a run on this machine: a tool that names `{"tool":
//! "registry:SLUG"}` is offered the library's tool, pulled with the user's token (the library
//! answers with the tools they see only: another team's is not found), and each call runs it
//! here, as `llmtool run` would, kept in the run log. Tools call tools at most three deep.

use std::sync::Arc;

use llmtool_format::model::{FunctionEntry, FunctionSource, Tool, ToolKind};
use llmtool_functions::{Extra, FunctionsError};
use llmtool_providers::functions::{FunctionCall, FunctionHost, FunctionSpec, Returned};
use llmtool_registry::Reference;
use llmtool_registry::client::ClientError;
use llmtool_runtime::{FunctionSources, ParamOverrides, Runtime, Subject};

/// How many tools deep one run's calls may go.
const MOST_DEPTH: u8 = 3;

/// `runtime`, offering library tools as functions when `tool` names any.
pub(crate) fn with_library_tools(runtime: Runtime, tool: &Tool) -> Runtime {
    let names_tools = tool.metadata.as_ref().and_then(|m| m.functions.as_ref()).is_some_and(|f| {
        f.value.iter().any(|entry| matches!(entry.source(), Some(FunctionSource::Tool(_))))
    });
    if !names_tools {
        return runtime;
    }
    let sources = LibraryTools { runtime: runtime.clone(), depth: 0 };
    runtime.with_function_sources(Arc::new(sources))
}

/// The library's tools, pulled as the user (their token).
struct LibraryTools {
    /// What each call runs on (without these sources: a call's own run gets them afresh).
    runtime: Runtime,
    depth: u8,
}

impl FunctionSources for LibraryTools {
    fn function(&self, entry: &FunctionEntry) -> Result<Extra, FunctionsError> {
        let Some(FunctionSource::Tool(reference)) = entry.source() else {
            return Err(FunctionsError::Unavailable(
                "only library tools are answered by the library".to_owned(),
            ));
        };
        if self.depth >= MOST_DEPTH {
            return Err(FunctionsError::Unavailable(format!(
                "tools call other tools at most {MOST_DEPTH} deep"
            )));
        }
        let unavailable = |error: anyhow::Error| FunctionsError::Unavailable(format!("{error:#}"));
        let library = crate::registry::named().map_err(unavailable)?;
        let named = reference.strip_prefix("registry:").unwrap_or(reference);
        let parsed =
            Reference::parse(named).ok_or_else(|| FunctionsError::NotFound(named.to_owned()))?;
        let pulled = match library.pull_blocking(&parsed) {
            Ok(pulled) => pulled,
            Err(ClientError::Refused { status: 404, .. }) => {
                return Err(FunctionsError::NotFound(parsed.slug));
            }
            Err(error) => return Err(FunctionsError::Unavailable(error.to_string())),
        };
        let path = Reference::pinned(&pulled.slug, pulled.version).path();
        let file = llmtool_runtime::ToolFile::from_bytes(path.clone(), pulled.text.into_bytes());
        let tool = file.into_tool().map_err(|errors| {
            FunctionsError::Unavailable(format!("{path} has errors:\n{}", errors.report))
        })?;
        if tool.kind() == ToolKind::Smart {
            return Err(FunctionsError::Unavailable(format!(
                "{path} is a smart tool; smart tools are not offered as functions"
            )));
        }
        let name = entry.offered_name().unwrap_or_else(|| pulled.slug.clone());
        let form = llmtool_convert::FunctionTool::from_tool(&tool, Some(&name), &[]).value;
        let spec = FunctionSpec {
            name: form.name,
            description: form.description,
            parameters: form.parameters,
        };
        let deeper = LibraryTools { runtime: self.runtime.clone(), depth: self.depth + 1 };
        let runtime = self.runtime.with_function_sources(Arc::new(deeper));
        Ok((spec, Arc::new(ToolCall { runtime, tool, path })))
    }
}

/// A call of a library tool: a run of it on this machine.
struct ToolCall {
    runtime: Runtime,
    tool: Tool,
    /// `registry:SLUG@VERSION`, as the run log names it.
    path: String,
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
        let shown =
            |error: llmtool_runtime::RunError| self.runtime.redact(&error.to_string()).into_owned();
        let (runtime, tool) = (self.runtime.clone(), self.tool.clone());
        // Building the request may pull more tools from the library: off this thread.
        let request = tokio::task::spawn_blocking(move || {
            runtime.request(&tool, prompt, ParamOverrides::default())
        })
        .await
        .map_err(|stopped| stopped.to_string())?
        .map_err(shown)?;
        let subject = Subject::new("function", Some(self.path.clone()), &self.tool, &inputs);
        let answer = self.runtime.answer_request(&request, Some(&subject), std::future::pending());
        answer.await.map(|answer| answer.text).map_err(shown)
    }
}
