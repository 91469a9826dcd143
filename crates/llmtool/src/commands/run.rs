//! `llmtool run`: render a tool, send it to a model, stream the answer, enforce the expected
//! output. Every run starts a conversation (`llmtool reply` goes on with it).

mod args;
pub(crate) mod library_functions;
pub(crate) mod on_server;
mod smart;
pub(crate) mod turn;

pub(crate) use args::{RunArgs, RunFormat, SandboxArgs, TurnArgs};

use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use llmtool_format::document::Document;
use llmtool_format::model::{Tool, ToolKind};
use llmtool_format::template::{Inputs, ToolTemplate};
use llmtool_providers::ApiKind;
use llmtool_providers::run::{RunOptions, RunRequest};
use llmtool_providers::transport::RetryPolicy;
use llmtool_runtime::pictures::{PictureFolder, Pictures};
use llmtool_runtime::{
    Fetch, LogPolicy, ParamOverrides, RunError, Runtime, RuntimeOptions, Subject,
    new_conversation_id,
};

use crate::cli::{ModelArgs, VariableArgs};
use crate::commands::render::{ValuesFrom, load_tool, print_value_problems, read_inputs};
use crate::commands::{cost, model, reply};
use crate::outcome::Outcome;
use crate::{io, secrets, settings};
use turn::{Printing, say_notices, take_turn};

pub(crate) fn run(args: &RunArgs) -> anyhow::Result<Outcome> {
    if args.continue_last || args.cid.is_some() {
        return reply::from_run(args);
    }
    // A dry run sends nothing anywhere: it is shown as a run here would be.
    if !args.dry_run
        && let Some((library, reference)) = on_server::library_for(&args.tool, args.local)?
    {
        return on_server::run(&library, &reference, args);
    }
    let Some(loaded) = load(&args.tool)? else { return Ok(Outcome::Problems) };
    let inputs = read_inputs(&args.variables, loaded.template.variables())?;
    let how = How {
        tool: &args.tool,
        target: &args.target,
        turn: &args.turn,
        sandbox: args.sandbox,
        format: args.format,
        max_repairs: args.max_repairs,
        raw: args.raw,
        dry_run: args.dry_run,
        origin: "run",
        values_from: ValuesFrom::Flags,
    };
    run_with(&how, loaded, inputs)
}

/// How a tool is run: what `run` and `call` share besides its values.
pub(crate) struct How<'a> {
    /// Where the tool came from (a file, `-`, or a library name).
    pub(crate) tool: &'a Path,
    pub(crate) target: &'a ModelArgs,
    pub(crate) turn: &'a TurnArgs,
    pub(crate) sandbox: SandboxArgs,
    pub(crate) format: RunFormat,
    pub(crate) max_repairs: u32,
    pub(crate) raw: bool,
    pub(crate) dry_run: bool,
    /// What ran it, for the run log: `run`, `call`.
    pub(crate) origin: &'static str,
    /// Where its values came from, for the hints when they have problems.
    pub(crate) values_from: ValuesFrom,
}

/// Runs `loaded` with `inputs` as `how` says: a prompt tool's first turn, or a smart tool's
/// code in the sandbox.
pub(crate) fn run_with(how: &How<'_>, loaded: Loaded, inputs: Inputs) -> anyhow::Result<Outcome> {
    if loaded.tool.kind() == ToolKind::Smart {
        return smart::run(how, loaded, &inputs);
    }
    let opened = open_with(loaded, inputs, how.values_from, how.target, how.turn, how.dry_run)?;
    let opening = match opened {
        Ok(opening) => opening,
        Err(outcome) => return Ok(outcome),
    };
    let options = RunOptions {
        max_repairs: how.max_repairs,
        raw: how.raw,
        live: how.format == RunFormat::Text,
        ..RunOptions::streamed(!how.turn.no_stream)
    };
    if how.dry_run {
        return dry_run(&opening, options);
    }
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    // The local model is fetched and loaded before Ctrl-C is caught, so that Ctrl-C still
    // stops a download or a load at once.
    tokio.block_on(opening.runtime.prepare(&opening.request))?;
    let printing =
        Printing { format: how.format, usage: how.turn.usage, preview: !how.turn.no_preview };
    let subject = opening.subject(how.origin);
    let end = take_turn(&tokio, &opening.runtime, &opening.request, options, &subject, printing)?;
    Ok(end.outcome)
}

/// A tool's first turn, ready to send: the tool, its values, the runtime and the request, and
/// the id of the conversation it starts.
pub(crate) struct Opening {
    pub(crate) name: String,
    pub(crate) tool: Tool,
    pub(crate) inputs: Inputs,
    pub(crate) runtime: Runtime,
    pub(crate) request: RunRequest,
    pub(crate) conversation: String,
}

impl Opening {
    /// The first turn, a run by `origin`, for the run log.
    pub(crate) fn subject(&self, origin: &'static str) -> Subject {
        let subject = Subject::new(origin, Some(self.name.clone()), &self.tool, &self.inputs);
        self.runtime.first_turn(subject, &self.conversation, &self.tool)
    }
}

/// The options of a runtime for `target` and `turn`.
pub(crate) fn runtime_options(target: &ModelArgs, turn: &TurnArgs) -> RuntimeOptions {
    RuntimeOptions {
        retry: RetryPolicy {
            max_retries: turn.retries,
            max_rate_limit_retries: turn.retries,
            ..RetryPolicy::default()
        },
        fetch: if turn.yes { Fetch::Yes } else { Fetch::Ask(Arc::new(model::ask)) },
        progress: Some(model::progress()),
        seed: turn.seed,
        log: LogPolicy::from_env(turn.no_log_values),
        pictures: Pictures::Saved(match &turn.out {
            Some(folder) => PictureFolder::Given(folder.clone()),
            None => PictureFolder::FreshIn(".".into()),
        }),
        ..settings::runtime_options(target)
    }
}

/// A tool read and checked, ready to run.
pub(crate) struct Loaded {
    pub(crate) name: String,
    pub(crate) document: Document,
    pub(crate) template: ToolTemplate,
    pub(crate) tool: Tool,
}

/// Reads and checks the tool at `path`; `None` when it has errors (printed).
pub(crate) fn load(path: &Path) -> anyhow::Result<Option<Loaded>> {
    let name = io::display_name(path);
    let Some((document, template)) = load_tool(path, &name)? else { return Ok(None) };
    let tool = document.tool.clone().context("a checked tool has a model")?;
    Ok(Some(Loaded { name, document, template, tool }))
}

/// The first turn of the tool at `path` with `variables`; or, when it cannot be sent (its
/// problems printed), the outcome.
pub(crate) fn open(
    path: &Path,
    variables: &VariableArgs,
    target: &ModelArgs,
    turn: &TurnArgs,
    dry_run: bool,
) -> anyhow::Result<Result<Opening, Outcome>> {
    let Some(loaded) = load(path)? else { return Ok(Err(Outcome::Problems)) };
    if loaded.tool.kind() == ToolKind::Smart {
        let name = &loaded.name;
        anyhow::bail!(
            "{name} is a smart tool: `llmtool run {name}` runs its code (a conversation starts from prompt tools only)"
        );
    }
    let inputs = read_inputs(variables, loaded.template.variables())?;
    open_with(loaded, inputs, ValuesFrom::Flags, target, turn, dry_run)
}

/// [`open`], of a prompt tool already loaded, with its values.
fn open_with(
    loaded: Loaded,
    inputs: Inputs,
    from: ValuesFrom,
    target: &ModelArgs,
    turn: &TurnArgs,
    dry_run: bool,
) -> anyhow::Result<Result<Opening, Outcome>> {
    let Loaded { name, document, template, tool } = loaded;
    let prompt = match template.render(&inputs) {
        Ok(prompt) => prompt,
        Err(problems) => {
            print_value_problems(&name, &document.text, &template, &inputs, &problems, from);
            return Ok(Err(Outcome::Problems));
        }
    };
    let providers = settings::load_providers(target.setup.config.as_deref())?;
    let options = runtime_options(target, turn);
    let overrides = ParamOverrides { temperature: turn.temperature, max_tokens: turn.max_tokens };
    let mut runtime = Runtime::new(providers.clone(), options.clone())?;
    if dry_run {
        runtime = settings::with_stand_in_key(runtime, &tool, providers, options)?;
    }
    let runtime = library_functions::with_library_tools(runtime, &tool);
    let mut request = match sendable(runtime.request(&tool, prompt, overrides))? {
        Ok(request) => request,
        Err(outcome) => return Ok(Err(outcome)),
    };
    say_notices(&request);
    let conversation = new_conversation_id();
    request.cache_key = Some(conversation.clone());
    Ok(Ok(Opening { name, tool, inputs, runtime, request, conversation }))
}

/// `request`, or the outcome of a request that must not or cannot be sent: data-loss
/// prevention stopped it, or it is too long (the input's problem, exit 1, said here).
pub(crate) fn sendable(
    request: Result<RunRequest, RunError>,
) -> anyhow::Result<Result<RunRequest, Outcome>> {
    match request {
        Ok(request) => Ok(Ok(request)),
        Err(RunError::Blocked(report)) => {
            eprintln!("error: {report}");
            Ok(Err(Outcome::Problems))
        }
        Err(error @ (RunError::PromptTooLarge { .. } | RunError::OverContextWindow { .. })) => {
            eprintln!("error: {error}");
            if let Some(hint) = crate::documents::over_window_hint() {
                eprintln!("{hint}");
            }
            Ok(Err(Outcome::Problems))
        }
        Err(error) => Err(error.into()),
    }
}

/// `--dry-run`: the request printed, not sent, with its estimated cost.
fn dry_run(opening: &Opening, options: RunOptions) -> anyhow::Result<Outcome> {
    let request = &opening.request;
    if request.target.endpoint.api == ApiKind::Local {
        let mut shown = serde_json::json!({
            "provider": "local",
            "model": request.target.model,
            "messages": request.messages(),
        });
        if let Some(functions) = &request.functions {
            shown["functions"] = serde_json::to_value(&functions.specs)?;
        }
        let text = serde_json::to_string_pretty(&shown)? + "\n";
        io::write_stdout(secrets::redact(&text).as_bytes())?;
        let counted = match opening.runtime.local_prompt_tokens(request) {
            Some(Ok(tokens)) => Some(tokens),
            Some(Err(error)) => {
                eprintln!("warning: the prompt's tokens cannot be counted: {error}");
                None
            }
            None => None,
        };
        eprintln!("{}", cost::worst_case_line(request, counted));
        return Ok(Outcome::Ok);
    }
    let (http, warnings) = request.first_request(options)?;
    for warning in &warnings {
        eprintln!("warning: {}", secrets::redact(warning));
    }
    io::write_stdout(secrets::redact(&http.display_redacted()).as_bytes())?;
    eprintln!("{}", cost::worst_case_line(request, None));
    Ok(Outcome::Ok)
}
