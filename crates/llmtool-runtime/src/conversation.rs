//! Conversations: a tool's answer, then the follow-ups asked after it, each turn a run of its
//! own. A follow-up is sent with the whole conversation so far, in each API's own multi-turn
//! form (the tool's prompt first); the tool's expected output binds its own answer, and
//! follow-ups are answered in free text. A value data-loss prevention hid keeps its placeholder
//! in every turn, and a value typed in a follow-up is hidden too. When the conversation
//! outgrows the model's context window, its oldest follow-ups are left out (never the tool's
//! prompt and answer), and the request says which.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use llmtool_dlp::{Policy as DlpPolicy, Redaction};
use llmtool_format::document::Document;
use llmtool_format::model::Tool;
use llmtool_format::output::{OutputKind, OutputSpec};
use llmtool_providers::Message;
use llmtool_providers::run::{CHARACTERS_PER_TOKEN, RunReport, RunRequest, estimated_tokens};

use crate::dlp::Guarded;
use crate::log::{Subject, Turn};
use crate::runtime::Asked;
use crate::{Choice, ParamOverrides, RunError, Runtime};

/// One exchange of a conversation as the model saw it: what was asked (the tool's rendered
/// prompt first, then each follow-up) and what it answered, hidden values as their
/// placeholders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    /// Its turn: 1 for the tool's own run.
    pub turn: u32,
    pub asked: String,
    pub answer: String,
}

/// A conversation to go on with.
#[derive(Clone, PartialEq)]
pub struct Conversation {
    pub id: String,
    /// The tool as the conversation started: a follow-up uses this version, whatever the
    /// file or the library holds now.
    pub tool: Tool,
    /// The provider and model of its first turn, which every turn keeps.
    pub provider: String,
    pub model: String,
    /// The exchanges so far, in order: the tool's own first.
    pub exchanges: Vec<Exchange>,
    /// How many turns it has had, answered or not (a turn that failed or was cancelled is
    /// numbered, and not sent again).
    pub turns: u32,
    /// The placeholders of the values hidden so far, with the values: never sent.
    pub placeholders: BTreeMap<String, String>,
    /// The data-loss prevention policy it started under, which its follow-ups keep unless
    /// the user says otherwise (`None`: the tool's and the config's).
    pub dlp: Option<DlpPolicy>,
}

impl std::fmt::Debug for Conversation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the hidden values.
        f.debug_struct("Conversation")
            .field("id", &self.id)
            .field("provider", &self.provider)
            .field("model", &self.model)
            .field("exchanges", &self.exchanges.len())
            .field("placeholders", &self.placeholders.len())
            .finish_non_exhaustive()
    }
}

/// Why a conversation cannot go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConversationError {
    #[error("conversation {0} does not keep its tool")]
    NoTool(String),
    #[error("conversation {0} does not keep its prompt (its runs kept only a hash of the values)")]
    NotKept(String),
    #[error("conversation {0} has no answer to follow up yet (its first run did not finish)")]
    NoAnswer(String),
}

/// A new conversation's id: a ULID (it sorts by time, as `llm`'s do).
pub fn new_conversation_id() -> String {
    ulid::Ulid::new().to_string().to_lowercase()
}

impl Conversation {
    /// A conversation begun by the run `request` of `tool`, answered by `report`.
    pub fn start(
        id: String,
        tool: Tool,
        dlp: DlpPolicy,
        request: &RunRequest,
        report: &RunReport,
    ) -> Self {
        let mut conversation = Conversation {
            dlp: Some(dlp),
            id,
            tool,
            provider: request.target.endpoint.provider.clone(),
            model: request.target.model.clone(),
            exchanges: Vec::new(),
            turns: 0,
            placeholders: BTreeMap::new(),
        };
        conversation.push(request, report);
        conversation
    }

    /// The conversation once `request` (its next turn) has been answered by `report`.
    pub fn push(&mut self, request: &RunRequest, report: &RunReport) {
        let answer = report.output.as_ref().unwrap_or(&report.raw);
        // The run's placeholders, with those its function results added, when it has them.
        let grown = (!report.placeholders.0.is_empty()).then(|| {
            Arc::new(Redaction::resume(
                report.placeholders.0.iter().map(|(p, v)| (p.as_str(), v.as_str())),
            ))
        });
        let (asked, answer) = match grown.as_ref().or(request.redaction.as_ref()) {
            Some(redaction) => {
                self.placeholders.extend(
                    redaction.placeholders().into_iter().map(|(p, v)| (p.to_owned(), v.to_owned())),
                );
                (request.first_message(), redaction.mask(answer))
            }
            None => (request.first_message(), answer.clone()),
        };
        self.turns = self.turns.saturating_add(1);
        self.exchanges.push(Exchange { turn: self.turns, asked, answer });
    }

    /// The conversation once its next turn ended without an answer (failed, or cancelled).
    pub fn skip(&mut self) {
        self.turns = self.turns.saturating_add(1);
    }

    /// The number of its next turn.
    pub fn next_turn(&self) -> u32 {
        self.turns.saturating_add(1)
    }

    /// The conversation `kept` as the run log keeps it: its answered turns, in order (a turn
    /// that failed or was cancelled is not part of what the model is sent).
    pub fn from_log(kept: &llmtool_log::Conversation) -> Result<Self, ConversationError> {
        let id = kept.id.clone();
        let tool = kept
            .thread
            .tool
            .as_ref()
            .and_then(|json| Document::from_text(json.clone()).tool)
            .ok_or_else(|| ConversationError::NoTool(id.clone()))?;
        let mut exchanges = Vec::new();
        let turns = kept.turns.iter().filter_map(|turn| turn.turn).max().unwrap_or(0);
        for turn in &kept.turns {
            if matches!(
                turn.outcome,
                llmtool_log::Outcome::Failed | llmtool_log::Outcome::Cancelled
            ) {
                continue;
            }
            match (&turn.prompt, &turn.answer) {
                (Some(asked), Some(answer)) => exchanges.push(Exchange {
                    turn: turn.turn.unwrap_or(1),
                    asked: asked.clone(),
                    answer: answer.clone(),
                }),
                (None, _) => return Err(ConversationError::NotKept(id)),
                (Some(_), None) => {}
            }
        }
        if exchanges.is_empty() {
            return Err(ConversationError::NoAnswer(id));
        }
        Ok(Conversation {
            id,
            tool,
            provider: kept.provider.clone(),
            model: kept.model.clone(),
            exchanges,
            turns,
            placeholders: kept.thread.placeholders.clone(),
            dlp: kept.thread.dlp.as_deref().and_then(|name| name.parse().ok()),
        })
    }

    /// The run of its next turn, for the run log.
    pub fn subject(&self, origin: &'static str, tool_path: Option<String>) -> Subject {
        let values = serde_json::json!({});
        Subject {
            turn: Some(Turn {
                conversation: self.id.clone(),
                number: self.next_turn(),
                tool: None,
                dlp: None,
            }),
            ..Subject::with_values(origin, tool_path, &self.tool, values)
        }
    }
}

/// What a conversation's owner reads of its text: each of `placeholders` (as the conversation
/// keeps them) put back as the value it stands for. Anyone else reads the text as kept.
pub fn revealer(placeholders: &BTreeMap<String, String>) -> impl Fn(&str) -> String + use<> {
    let redaction = Redaction::resume(placeholders.iter().map(|(p, v)| (p.as_str(), v.as_str())));
    move |text| redaction.restore(text).into_owned()
}

impl Runtime {
    /// `subject`, a run of `tool`, as the first turn of a new conversation `id`: the tool and
    /// its data-loss prevention policy kept with it.
    pub fn first_turn(&self, subject: Subject, id: &str, tool: &Tool) -> Subject {
        Subject {
            turn: Some(Turn {
                conversation: id.to_owned(),
                number: 1,
                tool: serde_json::to_string(tool).ok(),
                dlp: Some(self.dlp_policy(tool)),
            }),
            ..subject
        }
    }

    /// The request of a follow-up to `conversation`: `text` asked of the model the
    /// conversation started on, with the exchanges so far before it. The tool's parameters
    /// apply (under `overrides`); the answer is free text; data-loss prevention goes on with
    /// the conversation's placeholders. When the whole would not fit the model's context
    /// window (known from its price), the oldest follow-ups are left out, and a notice says
    /// which.
    pub fn follow_up(
        &self,
        conversation: &Conversation,
        text: String,
        overrides: ParamOverrides,
    ) -> Result<RunRequest, RunError> {
        let tool = &conversation.tool;
        if tool.makes_images() {
            let name = tool.name().map_or_else(|| "this tool".to_owned(), |n| format!("`{n}`"));
            return Err(RunError::FollowUpOfPictures { tool: name });
        }
        let choice = Choice {
            model: Some(conversation.model.clone()),
            provider: Some(conversation.provider.clone()),
        };
        let target = self.target_on(tool, &choice)?;
        if let Some(limit) = self.max_prompt_bytes().filter(|&l| text.len() as u64 > l) {
            return Err(RunError::PromptTooLarge { bytes: text.len() as u64, limit });
        }
        let earlier = Redaction::resume(
            conversation.placeholders.iter().map(|(p, v)| (p.as_str(), v.as_str())),
        );
        let policy = self.guard().policy_in(tool, conversation.dlp);
        let (prompt, redaction, notice) = match self.guard().apply(policy, text, Some(earlier)) {
            Guarded::Send { prompt, redaction, notice } => (prompt, redaction, notice),
            Guarded::Blocked(report) => return Err(RunError::Blocked(report)),
        };
        let price = self.providers().price(&target);
        // The model's context window, and the longest prompt the runtime sends (the history
        // counts: a conversation cannot grow a request past what one prompt may be).
        let by_bytes = self.max_prompt_bytes().map(|bytes| bytes / CHARACTERS_PER_TOKEN as u64);
        let by_model = price.as_ref().and_then(|entry| entry.price.max_input);
        let window = by_model.into_iter().chain(by_bytes).min();
        let chat = tool.is_chat();
        let (history, dropped) = fitted(&conversation.exchanges, chat, &prompt, window);
        let mut notices: Vec<String> = notice.into_iter().collect();
        if let Some(note) = dropped_note(&dropped, window) {
            notices.push(note);
        }
        let asked_tokens =
            estimated_tokens(&history) + estimated_tokens(&[Message::user(&*prompt)]);
        if let Some(window) = window.filter(|&window| asked_tokens > window) {
            let model = format!("{}/{}", target.endpoint.provider, target.model);
            return Err(RunError::OverContextWindow { tokens: asked_tokens, window, model });
        }
        // A follow-up is the user's own text, answered in free text.
        let asked = Asked {
            history,
            prompt,
            chat: false,
            spec: OutputSpec { kind: OutputKind::Text, format: None },
            redaction,
            notices,
            cache_key: Some(conversation.id.clone()),
        };
        self.assemble(tool, target, price, asked, overrides)
    }

    /// [`Runtime::follow_up`] on a blocking thread, as a server calls it (data-loss
    /// prevention's scan is CPU work its async workers must not do).
    /// `conversation`, its next turn to be asked of the model `choice` picks instead of its
    /// own: checked as a run's choice is (a model this runtime may not run is refused), so a
    /// conversation switches only among the models a run could pick.
    pub fn switched(
        &self,
        conversation: &Conversation,
        choice: &Choice,
    ) -> Result<Conversation, RunError> {
        let target = self.target_on(&conversation.tool, choice)?;
        Ok(Conversation {
            provider: target.endpoint.provider,
            model: target.model,
            ..conversation.clone()
        })
    }

    pub async fn follow_up_off_thread(
        &self,
        conversation: &Conversation,
        text: String,
        overrides: ParamOverrides,
    ) -> Result<RunRequest, RunError> {
        let (runtime, conversation) = (self.clone(), conversation.clone());
        tokio::task::spawn_blocking(move || runtime.follow_up(&conversation, text, overrides))
            .await
            .unwrap_or_else(|stopped| Err(RunError::Stopped(stopped.to_string())))
    }
}

/// The messages of `exchanges` that fit `window` tokens with `asking` after them: the first
/// exchange (the tool's prompt and answer) always, then the newest follow-ups that fit; and
/// the turns left out (numbered from 1, the tool's own). Under `chat`, the tool's own prompt
/// is a chat's turns written out, sent as its messages.
fn fitted(
    exchanges: &[Exchange],
    chat: bool,
    asking: &str,
    window: Option<u64>,
) -> (Vec<Message>, Vec<u32>) {
    let messages_of = |exchange: &Exchange| {
        let mut messages: Vec<Message> = if chat && exchange.turn == 1 {
            llmtool_format::chat::split(&exchange.asked).iter().map(Message::of_turn).collect()
        } else {
            vec![Message::user(exchange.asked.clone())]
        };
        messages.push(Message::assistant(exchange.answer.clone()));
        messages
    };
    let Some(window) = window else {
        return (exchanges.iter().flat_map(messages_of).collect(), Vec::new());
    };
    let Some((first, follow_ups)) = exchanges.split_first() else {
        return (Vec::new(), Vec::new());
    };
    let first_messages = messages_of(first);
    let mut used = estimated_tokens(&first_messages) + estimated_tokens(&[Message::user(asking)]);
    // The newest follow-ups first, while they fit.
    let mut kept_from = follow_ups.len();
    for (index, exchange) in follow_ups.iter().enumerate().rev() {
        let tokens = estimated_tokens(&messages_of(exchange));
        if used + tokens > window {
            break;
        }
        used += tokens;
        kept_from = index;
    }
    let dropped = follow_ups[..kept_from].iter().map(|exchange| exchange.turn).collect();
    let mut messages = first_messages;
    messages.extend(follow_ups[kept_from..].iter().flat_map(messages_of));
    (messages, dropped)
}

/// What the user hears of the turns left out.
fn dropped_note(dropped: &[u32], window: Option<u64>) -> Option<String> {
    let (first, last) = (dropped.first()?, dropped.last()?);
    let mut note = String::from("the conversation outgrew the model's context window");
    if let Some(window) = window {
        let _ = write!(note, " ({window} tokens)");
    }
    let turns =
        if first == last { format!("turn {first}") } else { format!("turns {first}-{last}") };
    let _ =
        write!(note, ": {turns} left out of what is sent (the tool's prompt and answer are kept)");
    Some(note)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(n: u32, size: usize) -> Exchange {
        Exchange { turn: n, asked: format!("q{n}{}", "x".repeat(size)), answer: format!("a{n}") }
    }

    #[test]
    fn the_oldest_follow_ups_go_first_and_the_tool_prompt_stays() {
        let exchanges: Vec<Exchange> = (1..=4).map(|n| exchange(n, 400)).collect();
        let (all, left_out) = fitted(&exchanges, false, "why?", None);
        assert_eq!(all.len(), 8);
        assert!(left_out.is_empty());
        // Each exchange is about 101 tokens: room for the first, the newest and the question.
        let (some, dropped) = fitted(&exchanges, false, "why?", Some(250));
        assert_eq!(dropped, vec![2, 3], "turns 2 and 3 left out");
        assert_eq!(some.len(), 4);
        assert!(some[0].content.starts_with("q1"), "the tool's prompt first");
        assert!(some[2].content.starts_with("q4"), "then the newest follow-up");
        let note = dropped_note(&dropped, Some(250)).unwrap_or_default();
        assert!(note.contains("turns 2-3 left out"), "{note}");
        assert_eq!(dropped_note(&[], Some(250)), None);
    }

    #[test]
    fn a_chat_tools_own_turn_goes_on_as_its_messages() {
        use llmtool_providers::Role::{Assistant, System, User};
        let first = Exchange {
            turn: 1,
            asked: "system:\nBe terse.\n\nuser:\nuser:\n\\user:".into(),
            answer: "Hello".into(),
        };
        let follow_up = Exchange { turn: 2, asked: "system:\nagain".into(), answer: "No".into() };
        let (messages, _) = fitted(&[first, follow_up], true, "why?", None);
        let sent: Vec<_> = messages.iter().map(|m| (m.role, m.content.as_str())).collect();
        assert_eq!(
            sent,
            [
                (System, "Be terse."),
                (User, ""),
                (User, "user:"),
                (Assistant, "Hello"),
                (User, "system:\nagain"),
                (Assistant, "No")
            ]
        );
    }
}
