//! The one path from a tool to a model's answer, shared by `llmtool run`, the MCP server and
//! every later way of running a tool: choosing the model (the user's choice over the tool's
//! own `model_version` list), finding, fetching and loading the local model once per process,
//! building the request, and running it with the expected output enforced, with a typed error.
//!
//! [`Runtime`] is the entry point, and [`Runtime::execute`] the one place a run happens: every
//! command, server, batch and test suite runs through it. [`Runner`] is what servers hold, so that a test can stand
//! in a scripted model. [`files`] finds and loads tool files, with one rule for every command;
//! [`log`] writes each run to the run log. Data-loss prevention (`llmtool-dlp`) applies to
//! every prompt as [`Runtime::request_on`] builds its request.

mod allowed;
pub mod conversation;
mod dlp;
mod error;
pub mod files;
pub mod functions;
mod lifecycle;
pub mod local;
pub mod log;
pub mod pictures;
mod runner;
mod runtime;
pub mod site;
pub mod smart;
pub mod test_files;
mod trace;
pub mod worst_case;

pub use conversation::{Conversation, ConversationError, Exchange, new_conversation_id, revealer};
pub use dlp::report as dlp_report;
pub use error::{Rejected, RunError};
pub use files::{FileError, ToolErrors, ToolFile};
pub use functions::FunctionSources;
pub use lifecycle::{Finished, KeepAllFuture, KeepFuture, RunKeeper, ToKeep};
pub use llmtool_dlp::Policy as DlpPolicy;
pub use llmtool_providers::functions::{FunctionEvent, Observer};
pub use local::{Consent, Fetch, Progress, PullEvent, pull};
pub use log::{Account, Ended, LogPolicy, Subject, Turn};
pub use runner::{Answer, AnswerFuture, Runner, answer_in_task};
pub use runtime::{Choice, ParamOverrides, Runtime, RuntimeOptions};
pub use smart::{Admission, AdmitFuture, Admitted, ModelCall, SmartFinished, SmartRun};
pub use test_files::TestsFile;
