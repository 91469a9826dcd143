//! The functions a run offers its model: the ones its tool names in `metadata.functions`,
//! answered by the built-ins the operator set up (`llmtool_functions`) and by the caller's
//! other sources (library tools, MCP servers), their results screened by the run's
//! data-loss prevention before the model reads them. Nothing is offered that the tool did
//! not name.

use std::sync::{Arc, OnceLock};

use llmtool_dlp::{Policy, Redaction};
use llmtool_format::model::{FunctionEntry, Tool};
use llmtool_functions::{Extra, FunctionsError, Setup};
use llmtool_providers::functions::{Functions, ResultScreen};

use crate::RunError;
use crate::dlp::Guard;

/// Who answers the entries of `metadata.functions` that are not built-in: a library tool
/// (`{"tool": ...}`), an MCP server's function (`{"mcp": ...}`). The CLI and a team server
/// each give their own.
pub trait FunctionSources: Send + Sync {
    fn function(&self, entry: &FunctionEntry) -> Result<Extra, FunctionsError>;
}

/// What a runtime offers functions with: the operator's setup (built from the config file on
/// first need, or given by a server), and the other sources.
#[derive(Clone, Default)]
pub(crate) struct FunctionSetup {
    setup: Arc<OnceLock<Result<Arc<Setup>, String>>>,
    sources: Option<Arc<dyn FunctionSources>>,
}

impl FunctionSetup {
    /// A setup given whole (a server's integrations).
    pub(crate) fn given(setup: Setup, sources: Option<Arc<dyn FunctionSources>>) -> Self {
        let lock = OnceLock::new();
        let _ = lock.set(Ok(Arc::new(setup)));
        FunctionSetup { setup: Arc::new(lock), sources }
    }

    #[must_use]
    pub(crate) fn with_sources(&self, sources: Arc<dyn FunctionSources>) -> Self {
        FunctionSetup { setup: Arc::clone(&self.setup), sources: Some(sources) }
    }

    /// The functions `tool` offers, under the run's data-loss prevention `policy`; `None`
    /// when it names none.
    pub(crate) fn functions_for(
        &self,
        tool: &Tool,
        config: &llmtool_config::Config,
        guard: &Arc<Guard>,
        policy: Policy,
    ) -> Result<Option<Functions>, RunError> {
        let Some(entries) = tool.metadata.as_ref().and_then(|m| m.functions.as_ref()) else {
            return Ok(None);
        };
        if entries.value.is_empty() {
            return Ok(None);
        }
        let setup = self
            .setup
            .get_or_init(|| Setup::from_config(config).map(Arc::new))
            .as_ref()
            .map_err(|problem| FunctionsError::Config(problem.clone()))?;
        let sources = self.sources.clone();
        let mut extra = |entry: &FunctionEntry| match &sources {
            Some(sources) => sources.function(entry),
            None => Err(FunctionsError::Unavailable(
                "library tools and MCP functions are offered only where the run can reach them"
                    .to_owned(),
            )),
        };
        let (specs, toolbox) = llmtool_functions::offer(&entries.value, setup, &mut extra)?;
        let mut functions = Functions::new(specs, Arc::new(toolbox));
        functions.screen = Some(Arc::new(ResultGuard { guard: Arc::clone(guard), policy }));
        Ok(Some(functions))
    }
}

/// Data-loss prevention on a function's result, under the run's policy.
struct ResultGuard {
    guard: Arc<Guard>,
    policy: Policy,
}

impl ResultScreen for ResultGuard {
    fn screen(&self, result: String, redaction: &mut Redaction) -> Result<String, String> {
        self.guard.screen(self.policy, result, redaction)
    }
}
