//! Loading a llama-architecture GGUF model for the CPU: its weights (run by `crate::llama`),
//! tokenizer and chat template.

use std::io::Read as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokenizers::Tokenizer;

use crate::LocalError;
use crate::chat::{ChatMessage, ChatTemplate, Family};
use crate::gguf::Content;
use crate::llama::{Architecture, Cache, Llama, Segment};
use crate::metadata::{number, string};
use crate::tokenizer::Vocabulary;

/// A model ready to generate.
pub struct LocalModel {
    pub(crate) weights: Llama,
    /// The cache of [`LocalModel::logits`], one sequence fed piece by piece.
    cache: Cache,
    /// The last prompt run (or prompt and answer) and its keys and values: the next prompt
    /// starts from the part it shares with it (a tool's rows share the template's text before
    /// the first variable; a conversation's turn, the turns before).
    pub(crate) last_prompt: Option<crate::engine::Kept>,
    pub(crate) vocabulary: Vocabulary,
    pub(crate) chat: ChatTemplate,
    pub(crate) eos_tokens: Vec<u32>,
    pub(crate) vocab_size: usize,
    pub(crate) context_length: usize,
    pub load_time: Duration,
    pub name: String,
}

impl std::fmt::Debug for LocalModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalModel")
            .field("name", &self.name)
            .field("vocab_size", &self.vocab_size)
            .finish_non_exhaustive()
    }
}

/// What a model's file says before its weights: its metadata, tokenizer and chat template.
struct Header {
    content: Content,
    vocabulary: Vocabulary,
    chat: ChatTemplate,
}

impl Header {
    fn read(file: &[u8], path: &Path) -> Result<Header, LocalError> {
        let content = Content::read(file).map_err(|e| {
            LocalError::Model(format!("`{}` is not a usable GGUF file: {e}", path.display()))
        })?;
        let architecture = string(&content, "general.architecture").unwrap_or_default();
        if Architecture::named(&architecture).is_none() {
            return Err(LocalError::Model(format!(
                "architecture `{architecture}` is not supported; these are: {}",
                Architecture::NAMES
            )));
        }
        let vocabulary = Vocabulary::from_gguf(&content)?;
        let token_text = |key: &str| {
            number(&content, key)
                .and_then(|id| vocabulary.tokenizer.id_to_token(id))
                .unwrap_or_default()
        };
        let family = Architecture::named(&architecture).map_or(Family::Other, Architecture::turns);
        let chat = ChatTemplate::new(
            string(&content, "tokenizer.chat_template"),
            family,
            token_text("tokenizer.ggml.bos_token_id"),
            token_text("tokenizer.ggml.eos_token_id"),
        )?;
        Ok(Header { content, vocabulary, chat })
    }
}

/// How many tokens the model at `path` reads for `messages`: its chat template applied, then
/// its own tokenizer, as a run would, with the functions offered (`tools`); the weights are not
/// loaded.
pub fn count_prompt_tokens(
    path: &Path,
    messages: &[ChatMessage],
    tools: &[serde_json::Value],
) -> Result<usize, LocalError> {
    let file = read_gguf(path)?;
    let Header { vocabulary, chat, .. } = Header::read(&file, path)?;
    Ok(vocabulary.encode(&chat.render(messages, tools)?)?.len())
}

impl LocalModel {
    /// Loads a llama-architecture GGUF file.
    pub fn load(path: &Path) -> Result<Self, LocalError> {
        let started = Instant::now();
        let file = read_gguf(path)?;
        let Header { content, vocabulary, chat } = Header::read(&file, path)?;
        // The end of the text, the end of a turn, and the tokens that end a turn in the chat
        // formats of the families run here.
        let mut eos_tokens: Vec<u32> =
            ["tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id"]
                .iter()
                .filter_map(|key| number(&content, key))
                .collect();
        eos_tokens.dedup();
        for end in ["<|im_end|>", "<|endoftext|>", "<|eot_id|>", "</s>", "<|end|>", "<end_of_turn>"]
        {
            if let Some(id) = vocabulary.tokenizer.token_to_id(end)
                && !eos_tokens.contains(&id)
            {
                eos_tokens.push(id);
            }
        }
        let name = string(&content, "general.name").unwrap_or_else(|| {
            path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
        });
        let weights = Llama::load(&content, &file)?;
        let vocab_size = vocabulary.bytes.len();
        if weights.vocab_size() < vocab_size {
            return Err(LocalError::Model(format!(
                "the model scores {} tokens but its tokenizer has {vocab_size}",
                weights.vocab_size()
            )));
        }
        Ok(Self {
            context_length: weights.context_length(),
            cache: weights.cache(),
            last_prompt: None,
            weights,
            vocab_size,
            vocabulary,
            chat,
            eos_tokens,
            load_time: started.elapsed(),
            name,
        })
    }

    /// The tokens a prompt's text becomes: control tokens matched whole, and the
    /// beginning-of-text token first if the model wants one.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, LocalError> {
        self.vocabulary.encode(text)
    }

    pub fn tokenizer(&self) -> &Tokenizer {
        &self.vocabulary.tokenizer
    }

    /// The bytes each token stands for.
    pub fn vocab(&self) -> &[Vec<u8>] {
        &self.vocabulary.bytes
    }

    /// Runs the model on `tokens` at positions from `position` on (what was run before that
    /// position stays cached) and returns the scores of the next token, one per token of the
    /// vocabulary.
    pub fn logits(&mut self, tokens: &[u32], position: usize) -> Result<Vec<f32>, LocalError> {
        let mut segment = Segment { cache: &mut self.cache, tokens, position };
        let mut logits = self.weights.forward(std::slice::from_mut(&mut segment))?;
        let mut logits = logits.pop().unwrap_or_default();
        logits.truncate(self.vocab_size);
        Ok(logits)
    }
}

/// Whether `path` is named as a model file: `*.gguf`, or an Ollama blob (`sha256-HEX`).
fn named_as_model(path: &Path) -> bool {
    let blob = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_prefix("sha256-"));
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gguf"))
        || blob.is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A model file's bytes, mapped into memory read-only: the weights are the file's own pages,
/// shared with the page cache (and with every process that maps the same file), not a copy.
/// Cloning shares the mapping.
#[derive(Clone)]
pub struct FileBytes(Arc<memmap2::Mmap>);

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for FileBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FileBytes({} bytes mapped)", self.len())
    }
}

/// The bytes of a model file, mapped: a regular file (not a device, a pipe or a folder) whose
/// name ends in `.gguf` (or is an Ollama blob's, `sha256-HEX`) and whose first bytes are the
/// GGUF magic. Nothing of a file that fails these checks is read beyond its first four bytes,
/// or shown.
pub fn read_gguf(path: &Path) -> Result<FileBytes, LocalError> {
    let shown = path.display();
    if !named_as_model(path) {
        return Err(LocalError::Model(format!("`{shown}` is not a `.gguf` file")));
    }
    // Opened without blocking (a pipe would wait for a writer), then checked on the open
    // handle itself, so that the path cannot be swapped between the check and the read.
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let mut file = options.open(path).map_err(|e| crate::store::io_error(path, e))?;
    let metadata = file.metadata().map_err(|e| crate::store::io_error(path, e))?;
    if !metadata.is_file() {
        return Err(LocalError::Model(format!("`{shown}` is not a regular file")));
    }
    let mut magic = [0u8; 4];
    if file.read_exact(&mut magic).is_err() || &magic != b"GGUF" {
        return Err(LocalError::Model(format!(
            "`{shown}` is not a GGUF file (it does not start with `GGUF`)"
        )));
    }
    map(&file).map(|map| FileBytes(Arc::new(map))).map_err(|e| crate::store::io_error(path, e))
}

impl FileBytes {
    /// Tells the system that this process no longer reads the pages wholly inside `range`
    /// (a matrix copied at load): they leave its resident memory, stay in the page cache for
    /// other readers, and would be read from the file again if touched.
    pub(crate) fn forget(&self, range: std::ops::Range<usize>) {
        // Rounded inward to 4 KiB pages. Where pages are larger the system rounds the start
        // down, which may let go a neighbouring tensor's first page: that only costs reading it
        // from the page cache again.
        const PAGE: usize = 4096;
        let (start, end) = (range.start.next_multiple_of(PAGE), range.end / PAGE * PAGE);
        if start < end && end <= self.len() {
            forget_pages(&self.0, start, end - start);
        }
    }
}

#[cfg(unix)]
#[allow(unsafe_code, reason = "madvise with MADV_DONTNEED is unsafe in memmap2's terms")]
fn forget_pages(map: &memmap2::Mmap, offset: usize, len: usize) {
    // SAFETY: `map` is the shared, read-only mapping of a file that `map()` makes (the only
    // way a `FileBytes` is built): dropping its pages cannot zero or change them (that is what
    // makes MADV_DONTNEED unsafe for private or anonymous memory), and a later read, through
    // any slice still borrowed from them, faults the file's bytes back in. Those are the same
    // bytes as long as the file is not rewritten in place, which `map()`'s safety note already
    // relies on. The advice is only a saving, so a refusal is ignored.
    let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, offset, len) };
}

/// Elsewhere the pages stay: the copy then adds to the resident memory.
#[cfg(not(unix))]
fn forget_pages(_map: &memmap2::Mmap, _offset: usize, _len: usize) {}

/// Maps `file` (a regular file, checked on this handle) read-only.
#[allow(unsafe_code, reason = "memory-mapping a file is unsafe in Rust's terms")]
fn map(file: &std::fs::File) -> std::io::Result<memmap2::Mmap> {
    // SAFETY: the mapping is read-only (and shared with the page cache). Another program that
    // rewrote the file in place while it is mapped would change the weights under us, and one
    // that truncated it would make reads past the new end fault, as with llama.cpp's mapping;
    // llmtool's store never rewrites a model (it installs each under a new name, and verifies
    // it before it is loaded).
    unsafe { memmap2::MmapOptions::new().map(file) }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

    use super::*;

    #[test]
    fn a_turn_ends_on_the_files_end_token_and_on_the_families_end_of_turn_tokens() {
        // Phi-3's reference file names `<|endoftext|>` its end of text; its SentencePiece
        // vocabulary has llama's `</s>`, and its turns end on `<|end|>`: both found by name.
        let folder = std::env::var_os("LLMTOOL_REFERENCE_MODELS").map(std::path::PathBuf::from);
        let folder = folder.expect("LLMTOOL_REFERENCE_MODELS names the reference models");
        let model = LocalModel::load(&folder.join("phi3.gguf")).unwrap();
        let id = |token: &str| model.tokenizer().token_to_id(token).unwrap();
        assert_eq!(model.eos_tokens, [id("<|endoftext|>"), id("</s>"), id("<|end|>")]);
    }

    fn refused(path: &Path) -> String {
        read_gguf(path).unwrap_err().to_string()
    }

    #[test]
    fn only_regular_gguf_files_are_read_and_nothing_of_another_file_is_shown() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret.gguf");
        std::fs::write(&secret, "password=hunter2\n").unwrap();
        let message = refused(&secret);
        assert!(message.contains("not a GGUF file") && !message.contains("hunter2"), "{message}");
        let named = dir.path().join("notes.txt");
        std::fs::write(&named, "GGUF but not named so").unwrap();
        assert!(refused(&named).contains("not a `.gguf` file"));
        // A device or a pipe behind a `.gguf` name is never opened for reading.
        let device = dir.path().join("zero.gguf");
        std::os::unix::fs::symlink("/dev/zero", &device).unwrap();
        assert!(refused(&device).contains("not a regular file"));
        let fifo = dir.path().join("pipe.gguf");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        assert!(refused(&fifo).contains("not a regular file"));
        assert!(refused(dir.path()).contains("not a `.gguf` file"));
        let good = dir.path().join("ok.gguf");
        std::fs::write(&good, b"GGUF\x03\x00\x00\x00rest").unwrap();
        assert_eq!(&read_gguf(&good).unwrap()[..], b"GGUF\x03\x00\x00\x00rest");
    }
}
