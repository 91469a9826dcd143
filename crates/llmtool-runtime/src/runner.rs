//! [`Runner`]: how a server reaches a model, so that servers can be tested with a scripted
//! stand-in. [`Runtime`] is the real one.

use llmtool_providers::functions::Observer;
use opentelemetry::context::FutureExt as _;
use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use tracing::Instrument as _;

use llmtool_format::model::Tool;
use llmtool_providers::images::Picture;

use crate::{RunError, Runtime, SmartRun, Subject};

/// A boxed future, as [`Runner::answer`] returns.
pub type AnswerFuture = Pin<Box<dyn Future<Output = Result<Answer, RunError>> + Send + 'static>>;

/// A tool's answer as a server hands it back: its text and, for an image tool, its pictures
/// (when the runtime hands pictures back: [`crate::pictures::Pictures::Returned`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answer {
    /// The answer; for an image tool, one line a picture: its size, format and SHA-256.
    pub text: String,
    pub pictures: Vec<Picture>,
    /// The prompt an image API says it drew from, when it rewrote the tool's.
    pub revised_prompt: Option<String>,
}

impl From<String> for Answer {
    fn from(text: String) -> Self {
        Self { text, ..Self::default() }
    }
}

/// Runs rendered tools for a server.
pub trait Runner: Send + Sync + 'static {
    /// Whether `tool` runs on a model reached over the network.
    fn is_remote(&self, tool: &Tool) -> bool;

    /// The answer to `prompt` (rendered from `tool` with the values of `subject`), with its
    /// expected output enforced; the run is logged as a run of `subject`.
    fn answer(&self, tool: Tool, prompt: String, subject: Subject) -> AnswerFuture;

    /// [`Runner::answer`], telling `observer` of each function the model calls as it starts
    /// and ends (an MCP client's progress). A runner that offers no functions ignores it.
    fn answer_observed(
        &self,
        tool: Tool,
        prompt: String,
        subject: Subject,
        observer: Observer,
    ) -> AnswerFuture {
        let _ = observer;
        self.answer(tool, prompt, subject)
    }

    /// The answer of the smart tool `tool` (its code run in the sandbox) to `variables`, the
    /// dict `execute` gets; the run is logged as a run of `subject`. By default smart tools
    /// do not run.
    fn answer_smart(
        &self,
        tool: Tool,
        variables: serde_json::Map<String, serde_json::Value>,
        subject: Subject,
    ) -> AnswerFuture {
        let _ = (tool, variables, subject);
        Box::pin(async { Err(RunError::SmartToolsOff) })
    }

    /// The text of `error` as a client may see it: with no secret in it.
    fn public_message(&self, error: &RunError) -> String {
        error.to_string()
    }
}

/// The answer `work` gives, worked out in a task of its own that is cancelled (the future
/// `work` is given completes) when the answer is no longer awaited: a call dropped (its MCP
/// session closed) cancels the run, so the provider is not kept answering, or paid, for no
/// one, and a server's run limit stays true; the run, a task of its own, is still kept, as
/// cancelled.
pub fn answer_in_task<Work, Done>(work: Work) -> AnswerFuture
where
    Work: FnOnce(Pin<Box<dyn Future<Output = ()> + Send>>) -> Done,
    Done: Future<Output = Result<Answer, RunError>> + Send + 'static,
{
    let (calling, dropped) = tokio::sync::oneshot::channel::<()>();
    let cancel = Box::pin(async move {
        let _ = dropped.await;
    });
    // The run's spans go on under the caller's (a `tracing` span, or OpenTelemetry's context,
    // as the server's request spans are).
    let run = tokio::spawn(work(cancel).in_current_span().with_current_context());
    Box::pin(async move {
        let answer = run.await;
        drop(calling);
        answer.unwrap_or_else(|stopped| Err(RunError::Stopped(stopped.to_string())))
    })
}

impl Runner for Runtime {
    fn is_remote(&self, tool: &Tool) -> bool {
        Runtime::is_remote(self, tool)
    }

    fn answer(&self, tool: Tool, prompt: String, subject: Subject) -> AnswerFuture {
        let runtime = self.clone();
        answer_in_task(move |cancel| async move {
            runtime.answer_until(&tool, prompt, Some(&subject), cancel, None).await
        })
    }

    fn answer_observed(
        &self,
        tool: Tool,
        prompt: String,
        subject: Subject,
        observer: Observer,
    ) -> AnswerFuture {
        let runtime = self.clone();
        answer_in_task(move |cancel| async move {
            runtime.answer_until(&tool, prompt, Some(&subject), cancel, Some(observer)).await
        })
    }

    fn answer_smart(
        &self,
        tool: Tool,
        variables: serde_json::Map<String, serde_json::Value>,
        subject: Subject,
    ) -> AnswerFuture {
        let runtime = self.clone();
        answer_in_task(move |cancel| async move {
            // A tool served from a file has its requirements' lock beside it.
            let lock = crate::site::lock_of(subject.tool_path.as_deref());
            let run = SmartRun { variables, scratch: true, lock, ..SmartRun::default() };
            let finished = runtime.run_smart(&tool, run, Some(&subject), cancel).await?;
            if let Some(problem) = &finished.not_kept {
                tracing::warn!("the run is not kept: {problem}");
            }
            Ok(Answer::from(finished.ran.result?))
        })
    }

    fn public_message(&self, error: &RunError) -> String {
        match self.redact(&error.to_string()) {
            Cow::Borrowed(text) => text.to_owned(),
            Cow::Owned(text) => text,
        }
    }
}
