//! Turning a conversation into the model's prompt text with the chat template from its GGUF
//! metadata (a Jinja template), run by minijinja; a file without one gets its family's turn
//! format (Gemma's, Phi-3's) or ChatML.
//!
//! Some templates refuse a system message (Gemma 2's raises an exception on one): the
//! conversation is then rendered again with the system message put before the first user
//! message, which is what Gemma 3's own template does.

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
}

/// A compiled chat template.
#[derive(Debug)]
pub struct ChatTemplate {
    env: Environment<'static>,
    bos_token: String,
    eos_token: String,
    /// The template is our Gemma fallback, which has no place for a system message.
    folds_system: bool,
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
        None => rest.insert(0, ChatMessage { role: "user".into(), content: preamble }),
    }
    rest
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
        let fallback = match family {
            Family::Gemma => GEMMA,
            Family::Phi3 => PHI3,
            Family::Other => CHATML,
        };
        let folds_system = source.is_none() && family == Family::Gemma;
        env.add_template_owned("chat", source.unwrap_or_else(|| fallback.to_owned())).map_err(
            |e| LocalError::Model(format!("the model's chat template does not compile: {e}")),
        )?;
        Ok(Self { env, bos_token, eos_token, folds_system })
    }

    /// The prompt for `messages`, ending where the assistant's answer begins. A template that
    /// fails on a system message gets the conversation with that message folded into the
    /// first user message instead.
    pub fn render(&self, messages: &[ChatMessage]) -> Result<String, LocalError> {
        let has_system = messages.iter().any(|m| m.role == "system");
        let rendered = if self.folds_system && has_system {
            self.render_as_is(&fold_system(messages))
        } else {
            match self.render_as_is(messages) {
                // The template raised an exception of its own (`raise_exception`).
                Err(e) if has_system && e.kind() == ErrorKind::InvalidOperation => {
                    self.render_as_is(&fold_system(messages))
                }
                rendered => rendered,
            }
        };
        rendered.map_err(|e| LocalError::Model(format!("the chat template failed: {e}")))
    }

    fn render_as_is(&self, messages: &[ChatMessage]) -> Result<String, Error> {
        self.env.get_template("chat")?.render(context! {
            messages => minijinja::Value::from(minijinja::value::Serde(messages)),
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
        let messages = vec![ChatMessage { role: "user".into(), content: "Hi".into() }];
        let chatml = ChatTemplate::new(None, Family::Other, String::new(), String::new()).unwrap();
        assert_eq!(
            chatml.render(&messages).unwrap(),
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
        assert_eq!(template.render(&messages).unwrap(), "<s>HI");
    }

    fn conversation() -> Vec<ChatMessage> {
        let message =
            |role: &str, content: &str| ChatMessage { role: role.into(), content: content.into() };
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
            template.render(&conversation()).unwrap(),
            "[user: Answer in French.\n\nHi][assistant: Salut][user: Why?]"
        );
        // A template that takes them keeps them where they are.
        let chatml = ChatTemplate::new(None, Family::Other, String::new(), String::new()).unwrap();
        assert!(
            chatml
                .render(&conversation())
                .unwrap()
                .starts_with("<|im_start|>system\nAnswer in French.<|im_end|>")
        );
    }

    #[test]
    fn files_without_a_template_get_their_familys_turns() {
        let gemma = ChatTemplate::new(None, Family::Gemma, "<bos>".into(), "<eos>".into()).unwrap();
        assert_eq!(
            gemma.render(&conversation()).unwrap(),
            "<bos><start_of_turn>user\nAnswer in French.\n\nHi<end_of_turn>\n<start_of_turn>model\nSalut<end_of_turn>\n<start_of_turn>user\nWhy?<end_of_turn>\n<start_of_turn>model\n"
        );
        let phi3 = ChatTemplate::new(None, Family::Phi3, String::new(), String::new()).unwrap();
        assert_eq!(
            phi3.render(&conversation()[1..2]).unwrap(),
            "<|user|>\nHi<|end|>\n<|assistant|>\n"
        );
    }
}
