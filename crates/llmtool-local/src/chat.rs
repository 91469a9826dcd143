//! Turning a conversation into the model's prompt text with the chat template from its GGUF
//! metadata (a Jinja template), run by minijinja.

use minijinja::{Environment, Error, ErrorKind, context};
use serde::Serialize;

use crate::LocalError;

/// ChatML, used when a model has no template of its own.
const CHATML: &str = "{% for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

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
}

impl ChatTemplate {
    /// Compiles `source` (or ChatML when `None`).
    pub fn new(
        source: Option<String>,
        bos_token: String,
        eos_token: String,
    ) -> Result<Self, LocalError> {
        let mut env = Environment::new();
        minijinja_contrib::add_to_environment(&mut env);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", |message: String| -> Result<String, Error> {
            Err(Error::new(ErrorKind::InvalidOperation, message))
        });
        env.add_template_owned("chat", source.unwrap_or_else(|| CHATML.to_owned())).map_err(
            |e| LocalError::Model(format!("the model's chat template does not compile: {e}")),
        )?;
        Ok(Self { env, bos_token, eos_token })
    }

    /// The prompt for `messages`, ending where the assistant's answer begins.
    pub fn render(&self, messages: &[ChatMessage]) -> Result<String, LocalError> {
        let template =
            self.env.get_template("chat").map_err(|e| LocalError::Model(e.to_string()))?;
        template
            .render(context! {
                messages => minijinja::Value::from(minijinja::value::Serde(messages)),
                add_generation_prompt => true,
                bos_token => &self.bos_token,
                eos_token => &self.eos_token,
            })
            .map_err(|e| LocalError::Model(format!("the chat template failed: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chatml_fallback_and_pycompat_methods() {
        let messages = vec![ChatMessage { role: "user".into(), content: "Hi".into() }];
        let chatml = ChatTemplate::new(None, String::new(), String::new()).unwrap();
        assert_eq!(
            chatml.render(&messages).unwrap(),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
        );
        let python_style =
            "{{ bos_token }}{% for m in messages %}{{ m.content.strip().upper() }}{% endfor %}";
        let template =
            ChatTemplate::new(Some(python_style.into()), "<s>".into(), "</s>".into()).unwrap();
        assert_eq!(template.render(&messages).unwrap(), "<s>HI");
    }
}
