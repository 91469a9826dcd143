//! Why a run gave no answer, typed so that each caller can word it its own way (a terminal
//! message, an MCP tool error, an HTTP status).

use llmtool_local::LocalError;
use llmtool_providers::ProviderError;
use llmtool_providers::run::RunReport;

/// Everything that can stop a run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Choosing the model failed, or the provider failed to answer.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// The local model could not be found, fetched or loaded.
    #[error(transparent)]
    Local(#[from] LocalError),
    #[error(
        "the tool file names the model file `{model}`; llmtool opens a model file named by a tool only with `--allow-local-paths` (or `allow_local_paths = true` in the config file)"
    )]
    ModelFileNotAllowed { model: String },
    #[error(
        "no local model `{model}`: give a .gguf file (`--model local:PATH.gguf`), a name from the catalog (`llmtool model catalog`), or the name of one `llmtool model list` shows"
    )]
    NoSuchModel { model: String },
    /// A known local model is missing and may not be fetched now; `hint` says how to get it.
    #[error("the local model {file} is not installed: {hint}")]
    NotInstalled { file: &'static str, hint: String },
    /// The user was asked and said no.
    #[error("not downloaded; `llmtool model pull` fetches it later")]
    DownloadDeclined,
    /// An image tool was run by a runtime that keeps no pictures (a server that has no place
    /// for them yet).
    #[error("this tool makes pictures, and they have nowhere to go here")]
    NoPictureFolder,
    /// The pictures came but could not be saved.
    #[error("cannot save the pictures in `{}`: {error}", folder.display())]
    SavePictures {
        folder: std::path::PathBuf,
        error: std::io::Error,
        /// The run's report, its pictures gone: they were paid for, so its record keeps its
        /// usage and cost.
        report: Box<llmtool_providers::run::RunReport>,
    },
    /// The pictures are more than a server hands back in one answer.
    #[error(
        "the pictures take {} bytes, more than the {limit} a server hands back; run the tool with `llmtool run` to save them",
        bytes
    )]
    PicturesTooLarge { bytes: u64, limit: u64 },
    /// The answer never met the tool's expected output.
    #[error(transparent)]
    Rejected(#[from] Rejected),
    /// Data-loss prevention's `block` policy stopped the run; the located report of what was
    /// found (never the values).
    #[error("{0}")]
    Blocked(String),
    /// The config's `[dlp]` table cannot be used. (The problem is in the message, not also
    /// a `source`, so that a report of the error chain says it once.)
    #[error("in the `[dlp]` table of the config file: {0}")]
    DlpConfig(llmtool_dlp::ConfigError),
    /// A server's client asked for a model its operator did not configure (or a tool names one
    /// on a provider nobody set up); `allowed` is what it may choose.
    #[error(
        "`{asked}` is not a model this server runs; it runs: {}",
        if allowed.is_empty() { "none (its operator has configured no provider)".to_owned() } else { allowed.join(", ") }
    )]
    NotAllowed { asked: String, allowed: Vec<String> },
    /// A server refused the run before sending it: a model its caller may not use, a budget
    /// it would pass.
    #[error("{0}")]
    Refused(String),
    /// A follow-up to an image tool's run: an image API takes one prompt, not a conversation.
    #[error(
        "{tool} makes pictures, and an image API takes one prompt, not a conversation: run the tool again with what to change in its values"
    )]
    FollowUpOfPictures { tool: String },
    /// The rendered prompt is longer than a run may send (the tool-file size limit).
    #[error(
        "the prompt is {bytes} bytes, more than the {limit} a run sends (LLMTOOL_MAX_FILE_BYTES sets it); nothing was sent"
    )]
    PromptTooLarge { bytes: u64, limit: u64 },
    /// The rendered prompt is longer than the model's context window (from the price table).
    #[error(
        "the prompt is about {tokens} tokens ({} characters a token): {} more than the {window} of `{model}`'s context window; nothing was sent",
        llmtool_providers::run::CHARACTERS_PER_TOKEN,
        .tokens.saturating_sub(*.window)
    )]
    OverContextWindow { tokens: u64, window: u64, model: String },
    /// A worker thread of the run stopped (a bug, reported rather than a panic).
    /// The sandbox could not run a smart tool (its runtime could not load or start).
    #[error("the smart tool sandbox failed: {0}")]
    Sandbox(String),

    /// A smart tool's code failed (an exception, a limit): the input's problem.
    #[error(transparent)]
    Code(#[from] llmtool_sandbox::Failure),

    /// A smart tool's requirements cannot be used: not pinned, refused, native code, not
    /// fetched yet.
    #[error("{0}")]
    Requirements(String),

    /// A smart tool's requirements are not fetched yet, and may not be fetched now.
    #[error("{0}")]
    RequirementsMissing(String),

    /// Smart tools do not run here: a server runs them only when its operator enables them.
    #[error(
        "this server does not run smart tools (its operator enables them with `--smart-tools`)"
    )]
    SmartToolsOff,

    /// A smart run was asked of a tool that has no `tool_code`.
    #[error("this tool has no `tool_code`: it is a prompt tool")]
    NotSmart,

    #[error("the run stopped unexpectedly: {0}")]
    Stopped(String),

    /// The functions the tool names cannot be offered (a database nobody configured, a
    /// source this caller cannot reach): the run does not start.
    #[error("the tool's functions cannot be offered: {0}")]
    Functions(#[from] llmtool_functions::FunctionsError),
}

/// An answer that fell short of the expected output, after the repairs allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason} (after {repairs} repair(s)); the model answered:\n{raw}")]
pub struct Rejected {
    /// Why the last answer was rejected.
    pub reason: String,
    pub repairs: u32,
    /// The model's last answer, as received.
    pub raw: String,
}

impl Rejected {
    /// The answer of `report` if it met the expected output, else why it did not.
    pub fn check(report: &RunReport) -> Result<&str, Self> {
        let reason = match (&report.output, &report.error) {
            (Some(output), None) => return Ok(output),
            (_, Some(reason)) => reason.clone(),
            (None, None) => "no answer".to_owned(),
        };
        Err(Self { reason, repairs: report.repairs, raw: report.raw.clone() })
    }
}

impl From<llmtool_dlp::ConfigError> for RunError {
    fn from(problem: llmtool_dlp::ConfigError) -> Self {
        RunError::DlpConfig(problem)
    }
}
