//! `tools/call`: the arguments read back into the tool's variables, the prompt rendered, and
//! the tool run by a [`Runner`] (the configured provider, or the local model); a smart tool's
//! code run in the sandbox instead, when the server runs smart tools. An image tool's
//! pictures come back as MCP image content.

use base64::Engine as _;
use llmtool_convert::inputs_from_arguments;
use llmtool_format::model::ToolKind;
use llmtool_runtime::{Answer, FunctionEvent, Observer, Runner, Subject};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};

use crate::library::{ANSWER_KEY, Entry, Structured};

/// Calls the tool of `entry` with `arguments` (keyed as in its input schema), for the caller
/// named `by` when the endpoint knows them.
pub(crate) async fn call(
    entry: &Entry,
    arguments: Option<&Map<String, Value>>,
    runner: &dyn Runner,
    by: Option<&str>,
    observer: Option<Observer>,
) -> CallToolResult {
    // Read back by the rule that named the parameters in the input schema.
    let arguments = Value::Object(arguments.cloned().unwrap_or_default());
    let inputs = match inputs_from_arguments(entry.template.variables(), &arguments) {
        Ok(inputs) => inputs,
        Err(problem) => return error(format!("invalid arguments: {problem}")),
    };
    let values = match entry.template.resolve(&inputs) {
        Ok(values) => values,
        Err(problems) => {
            let lines: Vec<String> = problems.iter().map(|p| p.message.clone()).collect();
            return error(format!("invalid arguments: {}", lines.join("; ")));
        }
    };
    let path = Some(entry.path.display().to_string());
    let subject =
        Subject { by: by.map(str::to_owned), ..Subject::new("mcp", path, &entry.tool, &inputs) };
    let answer = match entry.tool.kind() {
        // A smart tool's code runs in the sandbox, when the server runs smart tools.
        ToolKind::Smart => {
            let variables = entry.template.values_object(&values);
            runner.answer_smart(entry.tool.clone(), variables, subject).await
        }
        ToolKind::Prompt => {
            let prompt = entry.template.render_values(&values);
            match observer {
                Some(observer) => {
                    runner.answer_observed(entry.tool.clone(), prompt, subject, observer).await
                }
                None => runner.answer(entry.tool.clone(), prompt, subject).await,
            }
        }
    };
    match answer {
        Ok(answer) => answered(entry, answer),
        Err(reason) => error(runner.public_message(&reason)),
    }
}

/// An observer that tells the MCP client of each function the tool's model calls, as
/// `notifications/progress` for the call's progress token (one step a call started or ended,
/// the message saying which), in order.
pub(crate) fn progress(
    peer: rmcp::service::Peer<rmcp::RoleServer>,
    token: rmcp::model::ProgressToken,
) -> Observer {
    let (sender, mut said) = tokio::sync::mpsc::unbounded_channel::<String>();
    tokio::spawn(async move {
        let mut step = 0.0;
        while let Some(message) = said.recv().await {
            step += 1.0;
            let mut progress = rmcp::model::ProgressNotificationParam::new(token.clone(), step);
            progress.message = Some(message);
            if peer.notify_progress(progress).await.is_err() {
                return;
            }
        }
    });
    std::sync::Arc::new(move |event| {
        let message = match event {
            FunctionEvent::Calling(call) => format!("calling {} {}", call.name, call.arguments),
            FunctionEvent::Returned(call) => {
                let how = if call.failed { "failed" } else { "returned" };
                format!("{} {how} in {} ms", call.name, call.ms)
            }
        };
        let _ = sender.send(message);
    })
}

/// The answer as text, with structured content when the tool declares its shape; an image
/// tool's pictures as image content, each with its media type, and the prompt the image API
/// drew from when it rewrote the tool's.
fn answered(entry: &Entry, answer: Answer) -> CallToolResult {
    if !answer.pictures.is_empty() {
        let mut content: Vec<ContentBlock> = answer
            .pictures
            .iter()
            .map(|picture| {
                let data = base64::engine::general_purpose::STANDARD.encode(&picture.bytes);
                ContentBlock::image(data, picture.format.media_type())
            })
            .collect();
        if let Some(revised) = answer.revised_prompt {
            content.push(ContentBlock::text(format!("revised prompt: {revised}")));
        }
        return CallToolResult::success(content);
    }
    let answer = answer.text;
    let value = match entry.structured {
        Structured::None => None,
        Structured::Choice => Some(Value::String(answer.clone())),
        // The runner has checked that a JSON answer parses.
        Structured::Json => serde_json::from_str::<Value>(&answer).ok(),
    };
    let mut result = CallToolResult::success(vec![ContentBlock::text(answer)]);
    result.structured_content = value.map(|value| json!({ ANSWER_KEY: value }));
    result
}

fn error(reason: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(reason)])
}
