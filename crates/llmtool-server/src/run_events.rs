//! A run's Server-Sent Events as types: `start`, `text` and `done`, what each carries, the one
//! writer that frames them, and the channel a run streams them through. The OpenAPI document
//! describes each event as the stream carries it (its name, and its data as one line of JSON of
//! the event's own schema), so that a client generator, and schemathesis on real streams, can
//! hold the server to it.

use std::borrow::Cow;
use std::convert::Infallible;
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, KeepAliveStream, Sse};
use futures_util::StreamExt as _;
use futures_util::stream::BoxStream;
use llmtool_log::{Outcome, Record};
use llmtool_runtime::smart::ModelCall;
use serde::Serialize;
use tokio::sync::mpsc;
use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::schema::{AnyOfBuilder, ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

use crate::pictures_api::PictureLink;

/// How many events may wait for a client that reads slowly; past that, it is taken to have
/// stopped reading and the run is cancelled.
const EVENTS_AHEAD: usize = 4096;

/// How long the last event waits for room.
const DONE_WAIT: Duration = Duration::from_secs(30);

/// `start`, the first event: what is about to run, and on which model.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct RunStart {
    /// The tool's slug, and the version that runs.
    pub(crate) slug: String,
    pub(crate) version: u32,
    /// `smart` for a smart tool; absent for a prompt tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) kind: Option<String>,
    /// Who answers: the provider and the model (`sandbox` for a smart tool's code).
    pub(crate) provider: String,
    pub(crate) model: String,
    /// The conversation the run starts or goes on with, and its turn (none for a smart tool),
    /// for `POST /conversations/{id}/messages`.
    pub(crate) conversation: Option<String>,
    pub(crate) turn: Option<u32>,
    /// The budgets of the caller or their team past their warning share.
    pub(crate) warnings: Vec<String>,
    /// What the request left out (old turns that did not fit the model's context window).
    pub(crate) notices: Vec<String>,
}

/// `text`: the answer's next piece, as it arrives (keys the server knows hidden).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct RunText {
    pub(crate) text: String,
}

/// `call`: the model asks for a function (one the tool offers); it runs now.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct RunCall {
    /// The function's name (`fetch_url`, `query_database`, a library tool's slug).
    pub(crate) name: String,
    /// The arguments as the model wrote them (JSON text).
    pub(crate) arguments: String,
}

/// `result`: a function call ended; what the model reads next (after data-loss prevention).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct RunResult {
    pub(crate) name: String,
    pub(crate) result: String,
    /// Whether the call failed or was refused (the result says why).
    pub(crate) failed: bool,
    pub(crate) ms: u64,
}

/// `done`, the last event: the run as it is kept.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct RunDone {
    pub(crate) slug: String,
    pub(crate) version: u32,
    /// `smart` for a smart tool; absent for a prompt tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) kind: Option<String>,
    #[serde(flatten)]
    pub(crate) run: DoneRun,
    /// An image tool's pictures, each kept with the run, for its owner to fetch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) pictures: Option<Vec<PictureLink>>,
    #[serde(flatten)]
    pub(crate) smart: SmartDone,
}

/// How a run ended: its record, or, for one that has none, the outcome alone.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum DoneRun {
    /// The run's record, as the run log keeps it (its `answer` as the caller saw it stream:
    /// with the values data-loss prevention hid from the model put back).
    Kept(Box<Record>),
    /// A run without a record (one that could not start): how it ended, and why.
    Unkept(Unkept),
}

impl DoneRun {
    /// The answer of a run that ended well.
    pub(crate) fn answer_if_ok(&self) -> Option<&str> {
        let (outcome, answer) = match self {
            Self::Kept(record) => (record.outcome, &record.answer),
            Self::Unkept(unkept) => (unkept.outcome, &unkept.answer),
        };
        answer.as_deref().filter(|_| outcome == Outcome::Ok)
    }
}

/// Documented as either of its forms (`anyOf`: a record also has the fields of [`Unkept`], so
/// `oneOf`, as a derived schema of an untagged enum says, would refuse every record).
impl PartialSchema for DoneRun {
    fn schema() -> RefOr<Schema> {
        AnyOfBuilder::new()
            .item(Ref::from_schema_name(Record::name()))
            .item(Ref::from_schema_name(Unkept::name()))
            .into()
    }
}

impl ToSchema for DoneRun {
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((Record::name().into(), Record::schema()));
        schemas.push((Unkept::name().into(), Unkept::schema()));
        Record::schemas(schemas);
        Unkept::schemas(schemas);
    }
}

/// The outcome of a run that has no record.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Unkept {
    pub(crate) outcome: Outcome,
    pub(crate) error: Option<String>,
    pub(crate) answer: Option<String>,
}

/// What a smart tool's run adds to `done` (nothing for a prompt tool), its texts with the
/// server's secrets hidden.
#[derive(Debug, Default, Serialize, ToSchema)]
pub(crate) struct SmartDone {
    /// What the code printed (its first bytes), and how many bytes were left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) printed: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) printed_dropped: Option<u64>,
    /// The line of `tool_code` a failure was raised at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) line: Option<u32>,
    /// Each `llm()` call, as it ended: its provider, model, tokens, cost and error.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub(crate) llm_calls: Option<Vec<ModelCall>>,
    /// The CPU time the code used, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cpu_ms: Option<u64>,
}

/// One event of a run's stream.
#[derive(Debug)]
pub(crate) enum RunEvent {
    Start(RunStart),
    Text(RunText),
    Call(RunCall),
    Result(RunResult),
    Done(Box<RunDone>),
}

impl RunEvent {
    /// The events by name, with the schema of each one's data.
    const NAMED: [(&'static str, &'static str); 5] = [
        ("start", "RunStart"),
        ("text", "RunText"),
        ("call", "RunCall"),
        ("result", "RunResult"),
        ("done", "RunDone"),
    ];

    pub(crate) fn text(text: &str) -> Self {
        Self::Text(RunText { text: text.to_owned() })
    }

    /// The event of a function call starting or ending, its texts with `hide` applied (the
    /// server's keys).
    pub(crate) fn function(
        event: llmtool_providers::functions::FunctionEvent<'_>,
        hide: &dyn Fn(&str) -> String,
    ) -> Self {
        use llmtool_providers::functions::FunctionEvent;
        match event {
            FunctionEvent::Calling(call) => {
                Self::Call(RunCall { name: call.name.clone(), arguments: hide(&call.arguments) })
            }
            FunctionEvent::Returned(call) => Self::Result(RunResult {
                name: call.name.clone(),
                result: hide(&call.result),
                failed: call.failed,
                ms: call.ms,
            }),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Self::Start(_) => "start",
            Self::Text(_) => "text",
            Self::Call(_) => "call",
            Self::Result(_) => "result",
            Self::Done(_) => "done",
        }
    }

    /// The one writer of a run's events: the event's name, and its data as one line of JSON.
    pub(crate) fn frame(&self) -> Event {
        let data = match self {
            Self::Start(start) => serde_json::to_string(start),
            Self::Text(text) => serde_json::to_string(text),
            Self::Call(call) => serde_json::to_string(call),
            Self::Result(result) => serde_json::to_string(result),
            Self::Done(done) => serde_json::to_string(done),
        };
        // These types hold strings, numbers and maps with string keys: they always serialize.
        Event::default().event(self.name()).data(data.unwrap_or_else(|_| "{}".to_owned()))
    }
}

/// In the OpenAPI document, a run's stream is documented event by event, as OpenAPI 3.1 does
/// for `text/event-stream`: each event an object of its name (`event`) and its data, a string
/// of JSON whose own schema is `contentSchema` (utoipa has no builder for that keyword yet, so
/// it is written as an extension, which serializes under its own name).
impl PartialSchema for RunEvent {
    fn schema() -> RefOr<Schema> {
        let mut events = OneOfBuilder::new().description(Some(
            "One event of the stream: its name, and its data as one line of JSON.",
        ));
        for (name, data) in Self::NAMED {
            let content_schema =
                serde_json::json!({ "$ref": format!("#/components/schemas/{data}") });
            let data = ObjectBuilder::new()
                .schema_type(Type::String)
                .content_media_type("application/json")
                .extensions(Some(Extensions::from_iter([("contentSchema", content_schema)])));
            let event = ObjectBuilder::new()
                .property(
                    "event",
                    ObjectBuilder::new().schema_type(Type::String).enum_values(Some([name])),
                )
                .property("data", data)
                .required("event")
                .required("data");
            events = events.item(event);
        }
        events.into()
    }
}

impl ToSchema for RunEvent {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("RunEvent")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((RunStart::name().into(), RunStart::schema()));
        schemas.push((RunText::name().into(), RunText::schema()));
        schemas.push((RunCall::name().into(), RunCall::schema()));
        schemas.push((RunResult::name().into(), RunResult::schema()));
        schemas.push((RunDone::name().into(), RunDone::schema()));
        RunStart::schemas(schemas);
        RunText::schemas(schemas);
        RunDone::schemas(schemas);
    }
}

/// A run's answer as Server-Sent Events, whatever kind of run it is.
pub(crate) type Events = Sse<KeepAliveStream<BoxStream<'static, Result<Event, Infallible>>>>;

/// Where a run sends its events, with room for [`EVENTS_AHEAD`] a slow client has not read.
#[derive(Clone)]
pub(crate) struct EventSender(mpsc::Sender<Event>);

impl EventSender {
    /// Sends `event`, waiting for room.
    pub(crate) async fn send(&self, event: &RunEvent) {
        let _ = self.0.send(event.frame()).await;
    }

    /// Sends `event` if there is room; `false` when the client has stopped reading.
    pub(crate) fn try_send(&self, event: &RunEvent) -> bool {
        self.0.try_send(event.frame()).is_ok()
    }

    /// Sends the last event, `done`, waiting a while for a slow client's room.
    pub(crate) async fn send_done(&self, done: RunDone) {
        let frame = RunEvent::Done(Box::new(done)).frame();
        let _ = tokio::time::timeout(DONE_WAIT, self.0.send(frame)).await;
    }

    /// Completes when the client has gone away.
    pub(crate) async fn closed(&self) {
        self.0.closed().await;
    }
}

/// A run's event channel: where it sends, and the stream the client reads, with keep-alives.
pub(crate) fn event_channel() -> (EventSender, Events) {
    let (sender, received) = mpsc::channel(EVENTS_AHEAD);
    let stream = futures_util::stream::unfold(received, |mut received| async move {
        received.recv().await.map(|event| (Ok(event), received))
    });
    (EventSender(sender), Sse::new(stream.boxed()).keep_alive(KeepAlive::default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_event_is_documented_by_name_with_its_datas_schema() {
        let schema = serde_json::to_value(RunEvent::schema()).unwrap();
        let events = schema["oneOf"].as_array().unwrap();
        let named: Vec<(&str, &str)> = events
            .iter()
            .map(|event| {
                let properties = &event["properties"];
                (
                    properties["event"]["enum"][0].as_str().unwrap(),
                    properties["data"]["contentSchema"]["$ref"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            named,
            [
                ("start", "#/components/schemas/RunStart"),
                ("text", "#/components/schemas/RunText"),
                ("call", "#/components/schemas/RunCall"),
                ("result", "#/components/schemas/RunResult"),
                ("done", "#/components/schemas/RunDone")
            ]
        );
        assert_eq!(events[0]["properties"]["data"]["contentMediaType"], "application/json");
        let mut schemas = Vec::new();
        RunEvent::schemas(&mut schemas);
        let components: Vec<&str> = schemas.iter().map(|(name, _)| name.as_str()).collect();
        for needed in ["RunStart", "RunText", "RunDone", "Record", "Outcome", "PictureLink"] {
            assert!(components.contains(&needed), "{needed} is missing from {components:?}");
        }
    }

    #[tokio::test]
    async fn a_stream_frames_each_event_with_its_name_and_one_line_of_json() {
        use axum::response::IntoResponse as _;
        let (events, stream) = event_channel();
        events.send(&RunEvent::text("two\nlines")).await;
        let unkept = Unkept { outcome: Outcome::Failed, error: Some("no".into()), answer: None };
        let done = RunDone {
            slug: "poet".into(),
            version: 2,
            kind: None,
            run: DoneRun::Unkept(unkept),
            pictures: None,
            smart: SmartDone::default(),
        };
        events.send_done(done).await;
        drop(events);
        let body = stream.into_response().into_body();
        let bytes = axum::body::to_bytes(body, 1 << 16).await.unwrap();
        assert_eq!(
            String::from_utf8(bytes.to_vec()).unwrap(),
            "event: text\ndata: {\"text\":\"two\\nlines\"}\n\n\
             event: done\ndata: {\"slug\":\"poet\",\"version\":2,\"outcome\":\"failed\",\"error\":\"no\",\"answer\":null}\n\n"
        );
    }
}
