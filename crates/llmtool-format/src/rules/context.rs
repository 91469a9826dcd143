//! What every semantic rule sees: the tool, the source text, and the prompt's placeholders.

use std::cell::OnceCell;
use std::ops::Range;

use crate::chat::{WrittenTurn, written};
use crate::image::{self, ImageError, ImageInfo};
use crate::model::{Avatar, Spanned, Tool};
use crate::rules::names::Names;
use crate::smart::{CodeFacts, facts};
use crate::span::Span;
use crate::syntax::literal::Escapes;
use crate::template::{Placeholder, placeholders};

pub struct Context<'a> {
    pub text: &'a str,
    pub tool: &'a Tool,
    avatar_image: OnceCell<Option<Result<ImageInfo, ImageError>>>,
    /// The names the prompt's placeholders give, found once for the rules that read them.
    placeholder_names: OnceCell<Names<'a>>,
    /// The declared variables' names, trimmed, in order.
    declared_names: OnceCell<Names<'a>>,
    /// The escapes of the `model_prompt` literal, found once for all spans into it.
    prompt_escapes: OnceCell<Escapes>,
    /// A smart tool's code, read once for every rule about it, and its literal's escapes.
    code_facts: OnceCell<Option<CodeFacts>>,
    code_escapes: OnceCell<Escapes>,
    /// A chat prompt's turns as written, read once for the rules about chats.
    chat_turns: OnceCell<Vec<WrittenTurn>>,
}

impl std::fmt::Debug for Context<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context").finish_non_exhaustive()
    }
}

impl<'a> Context<'a> {
    pub fn new(text: &'a str, tool: &'a Tool) -> Self {
        Self {
            text,
            tool,
            avatar_image: OnceCell::new(),
            placeholder_names: OnceCell::new(),
            declared_names: OnceCell::new(),
            prompt_escapes: OnceCell::new(),
            code_facts: OnceCell::new(),
            code_escapes: OnceCell::new(),
            chat_turns: OnceCell::new(),
        }
    }

    /// The turns of the prompt read as a chat, where each is written (see [`crate::chat`]).
    pub fn chat_turns(&self) -> &[WrittenTurn] {
        self.chat_turns.get_or_init(|| written(self.tool.prompt()))
    }

    pub fn avatar(&self) -> Option<&'a Avatar> {
        self.tool.metadata.as_ref()?.avatar.as_ref()
    }

    /// The avatar decoded and sniffed, once for all rules: `None` when the avatar is a plain
    /// URL (never fetched) or absent.
    pub fn avatar_image(&self) -> Option<&Result<ImageInfo, ImageError>> {
        self.avatar_image
            .get_or_init(|| {
                let avatar = self.avatar()?;
                let data = avatar.data.as_ref()?.as_str();
                let kind = avatar.kind.as_ref().map(Spanned::as_str);
                let embedded = match kind {
                    Some("base64") => true,
                    Some("url") => data.starts_with("data:") && data.contains(";base64,"),
                    _ => false,
                };
                embedded.then(|| image::decode_base64(data).and_then(|bytes| image::sniff(&bytes)))
            })
            .as_ref()
    }

    /// Every `{{...}}` of `model_prompt`, left to right.
    pub fn placeholders(&self) -> impl Iterator<Item = Placeholder<'a>> {
        placeholders(self.tool.prompt())
    }

    /// The names `model_prompt`'s placeholders give, each once, in the order they first
    /// appear. Kept rather than every placeholder: a prompt may hold millions of them, and the
    /// rules need only the names.
    pub fn placeholder_names(&self) -> &Names<'a> {
        self.placeholder_names.get_or_init(|| self.placeholders().map(|p| p.name).collect())
    }

    /// The declared variables' names, trimmed, each once, in order.
    pub fn declared_names(&self) -> &Names<'a> {
        self.declared_names
            .get_or_init(|| self.tool.variables().iter().map(|v| v.name.value.trim()).collect())
    }

    /// The file span of `range`, a byte range of the decoded `model_prompt` value (a binary
    /// search among the literal's escapes, so that spans for every placeholder stay linear).
    pub fn prompt_span(&self, range: Range<usize>) -> Span {
        let Some(prompt) = &self.tool.model_prompt else { return Span::empty(0) };
        let escapes = self.prompt_escapes.get_or_init(|| Escapes::of(self.text, prompt.span));
        escapes.span(range)
    }

    /// What a smart tool's code says about itself (`None` for a prompt tool).
    pub fn code_facts(&self) -> Option<&CodeFacts> {
        self.code_facts.get_or_init(|| self.tool.code().map(|code| facts(&code.value))).as_ref()
    }

    /// The file span of `range`, a byte range of the decoded `tool_code` value.
    pub fn code_span(&self, range: Range<usize>) -> Span {
        let Some(code) = self.tool.code() else { return Span::empty(0) };
        let escapes = self.code_escapes.get_or_init(|| Escapes::of(self.text, code.span));
        escapes.span(range)
    }
}
