//! Turning a conversation into the model's prompt text with the chat template from its GGUF
//! metadata (a Jinja template), run by minijinja; a file without one gets its family's turn
//! format (Gemma's, Phi-3's) or ChatML.
//!
//! Some templates refuse a system message (Gemma 2's raises an exception on one): the
//! conversation is then rendered again with the system message put before the first user
//! message, which is what Gemma 3's own template does.
//!
//! Functions the model may call go to the template as `tools`, and earlier calls as the
//! `tool_calls` of assistant messages (see [`crate::calls`]); only a template that reads
//! `tools` is given them.

use minijinja::value::Kwargs;
use minijinja::{Environment, Error, ErrorKind, context};
use serde::Serialize;

use crate::LocalError;

/// ChatML, used when a model has no template of its own and its family has no format.
const CHATML: &str = "{% for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

/// Gemma's turns: the assistant is the `model`; system messages are folded into the first
/// user turn before this template sees them.
const GEMMA: &str = "{{ bos_token }}{% for message in messages %}<start_of_turn>{{ 'model' if message.role == 'assistant' else message.role }}\n{{ message.content | trim }}<end_of_turn>\n{% endfor %}{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}";

/// Phi-3's turns.
const PHI3: &str = "{% for message in messages %}<|{{ message.role }}|>\n{{ message.content }}<|end|>\n{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}";

/// The turn format of a model family whose file carries no chat template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Gemma,
    Phi3,
    Other,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
    /// The functions an assistant message called, in the templates' form.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<serde_json::Value>,
}

impl ChatMessage {
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Self {
        Self { role: role.into(), content: content.into(), tool_calls: Vec::new() }
    }
}

/// A compiled chat template.
#[derive(Debug)]
pub struct ChatTemplate {
    env: Environment<'static>,
    bos_token: String,
    eos_token: String,
    /// The template is our Gemma fallback, which has no place for a system message.
    folds_system: bool,
    /// The template reads `tools`: the model was taught to call functions.
    takes_tools: bool,
}

/// `messages` with the system messages' text put before the first user message's (or as
/// the first user message, if there is none).
fn fold_system(messages: &[ChatMessage]) -> Vec<ChatMessage> {
    let system: Vec<&str> =
        messages.iter().filter(|m| m.role == "system").map(|m| m.content.as_str()).collect();
    let mut rest: Vec<ChatMessage> =
        messages.iter().filter(|m| m.role != "system").cloned().collect();
    let preamble = system.join("\n\n");
    match rest.iter_mut().find(|m| m.role == "user") {
        Some(user) => user.content = format!("{preamble}\n\n{}", user.content),
        None => rest.insert(0, ChatMessage::new("user", preamble)),
    }
    rest
}

/// The `tojson` filter as the Hugging Face templates have it: Python's `json.dumps`, with `, `
/// and `: ` between items, keys in their order and nothing escaped for HTML (which Jinja's own
/// filter does), or indented by `indent`. Functions are listed to a model in these bytes.
#[allow(
    clippy::needless_pass_by_value,
    reason = "minijinja hands a filter its keyword arguments by value"
)]
fn to_json(value: &minijinja::Value, options: Kwargs) -> Result<String, Error> {
    let indent: Option<usize> = options.get("indent")?;
    let mut out = Vec::new();
    let written = match indent {
        Some(width) => {
            let indent = " ".repeat(width);
            let pretty = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
            value.serialize(&mut serde_json::Serializer::with_formatter(&mut out, pretty))
        }
        None => value.serialize(&mut serde_json::Serializer::with_formatter(&mut out, PythonJson)),
    };
    written.map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))?;
    String::from_utf8(out).map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))
}

/// `json.dumps`' separators: `, ` and `: `.
struct PythonJson;

impl serde_json::ser::Formatter for PythonJson {
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first { Ok(()) } else { writer.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first { Ok(()) } else { writer.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
    ) -> std::io::Result<()> {
        writer.write_all(b": ")
    }
}

impl ChatTemplate {
    /// Compiles `source` (or, when `None`, the family's format: ChatML for most).
    pub fn new(
        source: Option<String>,
        family: Family,
        bos_token: String,
        eos_token: String,
    ) -> Result<Self, LocalError> {
        let mut env = Environment::new();
        minijinja_contrib::add_to_environment(&mut env);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", |message: String| -> Result<String, Error> {
            Err(Error::new(ErrorKind::InvalidOperation, message))
        });
        env.add_filter("tojson", to_json);
        let fallback = match family {
            Family::Gemma => GEMMA,
            Family::Phi3 => PHI3,
            Family::Other => CHATML,
        };
        let folds_system = source.is_none() && family == Family::Gemma;
        let source = source.unwrap_or_else(|| fallback.to_owned());
        let takes_tools = env
            .template_from_str(&source)
            .is_ok_and(|template| template.undeclared_variables(false).contains("tools"));
        env.add_template_owned("chat", source).map_err(|e| {
            LocalError::Model(format!("the model's chat template does not compile: {e}"))
        })?;
        Ok(Self { env, bos_token, eos_token, folds_system, takes_tools })
    }

    /// Whether the template has a place for functions (`tools`).
    pub fn takes_tools(&self) -> bool {
        self.takes_tools
    }

    /// The prompt for `messages`, ending where the assistant's answer begins. A template that
    /// fails on a system message gets the conversation with that message folded into the
    /// first user message instead. `tools` are the functions offered (none for most runs).
    pub fn render(
        &self,
        messages: &[ChatMessage],
        tools: &[serde_json::Value],
    ) -> Result<String, LocalError> {
        let has_system = messages.iter().any(|m| m.role == "system");
        let rendered = if self.folds_system && has_system {
            self.render_as_is(&fold_system(messages), tools)
        } else {
            match self.render_as_is(messages, tools) {
                // The template raised an exception of its own (`raise_exception`).
                Err(e) if has_system && e.kind() == ErrorKind::InvalidOperation => {
                    self.render_as_is(&fold_system(messages), tools)
                }
                rendered => rendered,
            }
        };
        rendered.map_err(|e| LocalError::Model(format!("the chat template failed: {e}")))
    }

    fn render_as_is(
        &self,
        messages: &[ChatMessage],
        tools: &[serde_json::Value],
    ) -> Result<String, Error> {
        // No functions is no `tools` at all: the templates test `if tools`.
        let tools =
            (!tools.is_empty()).then(|| minijinja::Value::from(minijinja::value::Serde(tools)));
        self.env.get_template("chat")?.render(context! {
            messages => minijinja::Value::from(minijinja::value::Serde(messages)),
            tools => tools,
            add_generation_prompt => true,
            bos_token => &self.bos_token,
            eos_token => &self.eos_token,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chatml_fallback_and_pycompat_methods() {
        let messages = vec![ChatMessage::new("user", "Hi")];
        let chatml = ChatTemplate::new(None, Family::Other, String::new(), String::new()).unwrap();
        assert_eq!(
            chatml.render(&messages, &[]).unwrap(),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
        );
        let python_style =
            "{{ bos_token }}{% for m in messages %}{{ m.content.strip().upper() }}{% endfor %}";
        let template = ChatTemplate::new(
            Some(python_style.into()),
            Family::Other,
            "<s>".into(),
            "</s>".into(),
        )
        .unwrap();
        assert_eq!(template.render(&messages, &[]).unwrap(), "<s>HI");
    }

    fn conversation() -> Vec<ChatMessage> {
        let message = |role: &str, content: &str| ChatMessage::new(role, content);
        vec![
            message("system", "Answer in French."),
            message("user", "Hi"),
            message("assistant", "Salut"),
            message("user", "Why?"),
        ]
    }

    #[test]
    fn a_template_that_refuses_system_messages_gets_them_in_the_first_user_turn() {
        // Gemma 2's own template raises on a system message.
        let refusing = "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for m in messages %}[{{ m.role }}: {{ m.content }}]{% endfor %}";
        let template =
            ChatTemplate::new(Some(refusing.into()), Family::Other, String::new(), String::new())
                .unwrap();
        assert_eq!(
            template.render(&conversation(), &[]).unwrap(),
            "[user: Answer in French.\n\nHi][assistant: Salut][user: Why?]"
        );
        // A template that takes them keeps them where they are.
        let chatml = ChatTemplate::new(None, Family::Other, String::new(), String::new()).unwrap();
        assert!(
            chatml
                .render(&conversation(), &[])
                .unwrap()
                .starts_with("<|im_start|>system\nAnswer in French.<|im_end|>")
        );
    }

    #[test]
    fn files_without_a_template_get_their_familys_turns() {
        let gemma = ChatTemplate::new(None, Family::Gemma, "<bos>".into(), "<eos>".into()).unwrap();
        assert_eq!(
            gemma.render(&conversation(), &[]).unwrap(),
            "<bos><start_of_turn>user\nAnswer in French.\n\nHi<end_of_turn>\n<start_of_turn>model\nSalut<end_of_turn>\n<start_of_turn>user\nWhy?<end_of_turn>\n<start_of_turn>model\n"
        );
        let phi3 = ChatTemplate::new(None, Family::Phi3, String::new(), String::new()).unwrap();
        assert_eq!(
            phi3.render(&conversation()[1..2], &[]).unwrap(),
            "<|user|>\nHi<|end|>\n<|assistant|>\n"
        );
    }

    /// Qwen2.5's own template (tests/fixtures/templates, kept byte for byte): the functions
    /// are listed in its system turn, an earlier call is written back as the model wrote it,
    /// and results come back in the user's turn.
    #[test]
    fn qwens_template_is_given_the_functions_the_calls_and_their_results() {
        let source = include_str!("../tests/fixtures/templates/qwen2.5-coder-instruct.jinja");
        let qwen =
            ChatTemplate::new(Some(source.into()), Family::Other, String::new(), String::new())
                .unwrap();
        assert!(qwen.takes_tools());
        let tools = [serde_json::json!({"type": "function", "function": {"name": "web_search",
            "description": "Searches the web.", "parameters": {"type": "object"}}})];
        let call = serde_json::json!({"id": "call_0", "type": "function",
            "function": {"name": "web_search", "arguments": {"query": "rain"}}});
        let messages = [
            ChatMessage::new("system", "Be brief."),
            ChatMessage::new("user", "Will it rain?"),
            ChatMessage { tool_calls: vec![call], ..ChatMessage::new("assistant", "") },
            ChatMessage::new("tool", "Rain at noon."),
        ];
        let prompt = qwen.render(&messages, &tools).unwrap();
        assert!(prompt.starts_with("<|im_start|>system\nBe brief.\n\n# Tools\n"), "{prompt}");
        assert!(prompt.contains(
            "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"web_search\", \"description\": \"Searches the web.\""
        ), "{prompt}");
        assert!(prompt.ends_with(
            "<|im_start|>assistant\n<tool_call>\n{\"name\": \"web_search\", \"arguments\": {\"query\": \"rain\"}}\n</tool_call><|im_end|>\n\
             <|im_start|>user\n<tool_response>\nRain at noon.\n</tool_response><|im_end|>\n<|im_start|>assistant\n"
        ), "{prompt}");
        // Without functions, the template is as it was.
        let plain = qwen.render(&messages[..2], &[]).unwrap();
        assert_eq!(
            plain,
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nWill it rain?<|im_end|>\n<|im_start|>assistant\n"
        );
        // ChatML and the families' turns have no place for functions.
        let chatml = ChatTemplate::new(None, Family::Other, String::new(), String::new()).unwrap();
        assert!(!chatml.takes_tools());
    }
}
