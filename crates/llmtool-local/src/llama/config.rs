//! What a model's GGUF metadata says about its shape, and what each transformer family
//! changes in llama's block: biases, norms, activation, soft caps, sliding windows and the
//! rotary embedding's settings.

use super::attention::{Rope, RopeLayout};
use super::math;
use crate::LocalError;
use crate::chat::Family;
use crate::gguf::{Content, Value};
use crate::metadata::{float, string};

/// The transformer families this forward pass runs: llama's block, with what each family
/// changes in it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Architecture {
    #[default]
    Llama,
    /// Qwen2 (and Qwen2.5): biases on the query, key and value projections, and the rotary
    /// embedding in GPT-NeoX's layout (GGUF keeps its weights unpermuted).
    Qwen2,
    /// Qwen3: no biases, but each head's query and key RMS-normalised before the rotary
    /// embedding, and heads that may be wider than the model's width over its heads.
    Qwen3,
    /// Gemma 2: embeddings scaled by the square root of the width, RMS norms after attention
    /// and after the feed-forward block too, GELU, soft-capped attention scores and logits,
    /// every other layer attending through a sliding window.
    Gemma2,
    /// Gemma 3: Gemma 2 without the soft caps but with Qwen3's query/key norms; five layers in
    /// six attend through a sliding window, with a rotary embedding of their own.
    Gemma3,
    /// Phi-3 (and 3.5, 4-mini): query, key and value in one matrix, gate and up in another, a
    /// rotary embedding over part of each head, with longrope's factors.
    Phi3,
}

/// Each family by the name `general.architecture` gives it, which also prefixes its keys in
/// the metadata (`qwen2.embedding_length`).
const NAMED: [(&str, Architecture); 6] = [
    ("llama", Architecture::Llama),
    ("qwen2", Architecture::Qwen2),
    ("qwen3", Architecture::Qwen3),
    ("gemma2", Architecture::Gemma2),
    ("gemma3", Architecture::Gemma3),
    ("phi3", Architecture::Phi3),
];

impl Architecture {
    /// The family `general.architecture` names, if this engine runs it.
    pub(crate) fn named(name: &str) -> Option<Architecture> {
        NAMED.iter().find(|(named, _)| *named == name).map(|(_, architecture)| *architecture)
    }

    /// The families this engine runs, for messages.
    pub(crate) const NAMES: &'static str = "llama, qwen2, qwen3, gemma2, gemma3, phi3";

    fn name(self) -> &'static str {
        NAMED.iter().find(|(_, architecture)| *architecture == self).map_or("", |(name, _)| name)
    }

    /// `architecture.name`, the key of one of its settings in the metadata.
    fn key(self, name: &str) -> String {
        format!("{}.{name}", self.name())
    }

    /// The turns a file of this family gets when it carries no chat template.
    pub(crate) fn turns(self) -> Family {
        match self {
            Architecture::Gemma2 | Architecture::Gemma3 => Family::Gemma,
            Architecture::Phi3 => Family::Phi3,
            _ => Family::Other,
        }
    }

    /// Phi-3 keeps its query, key and value projections in one matrix, and its gate and up
    /// projections in another.
    pub(crate) fn fuses_projections(self) -> bool {
        self == Architecture::Phi3
    }

    fn rope_layout(self) -> RopeLayout {
        match self {
            Architecture::Llama => RopeLayout::Interleaved,
            _ => RopeLayout::Halves,
        }
    }

    pub(crate) fn is_gemma(self) -> bool {
        matches!(self, Architecture::Gemma2 | Architecture::Gemma3)
    }

    /// Every how many layers one attends to every position, the others through the sliding
    /// window (Gemma 2: layers 0, 2, 4… slide; Gemma 3: all but every sixth). Phi-3 files may
    /// name a window, but llama.cpp does not use it, and neither do we, so that both agree.
    fn sliding_period(self) -> Option<usize> {
        match self {
            Architecture::Gemma2 => Some(2),
            Architecture::Gemma3 => Some(6),
            _ => None,
        }
    }
}

/// The feed-forward block's activation of its gate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Activation {
    #[default]
    Silu,
    /// GELU in its tanh form (Gemma's, and llama.cpp's).
    Gelu,
}

impl Activation {
    pub(crate) fn apply(self, x: f32) -> f32 {
        match self {
            Activation::Silu => x / (1.0 + math::exp(-x)),
            Activation::Gelu => {
                const SQRT_2_OVER_PI: f32 = 0.797_884_6;
                0.5 * x * (1.0 + math::tanh(SQRT_2_OVER_PI * (x + 0.044_715 * x * x * x)))
            }
        }
    }

    /// `out[i]` = the activation of `gate[i]` × `up[i]`: the feed-forward block's gate, one
    /// loop per function so that each is vectorized.
    #[inline]
    pub(crate) fn gate(self, gate: &[f32], up: &[f32], out: &mut [f32]) {
        fn each(f: impl Fn(f32) -> f32, gate: &[f32], up: &[f32], out: &mut [f32]) {
            for ((out, g), u) in out.iter_mut().zip(gate).zip(up) {
                *out = f(*g) * u;
            }
        }
        match self {
            Activation::Silu => each(|x| Activation::Silu.apply(x), gate, up, out),
            Activation::Gelu => each(|x| Activation::Gelu.apply(x), gate, up, out),
        }
    }
}

/// The model's shape and its family's settings, from the GGUF metadata.
#[derive(Debug, Clone, Default)]
pub(crate) struct Config {
    pub architecture: Architecture,
    pub dim: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    pub layers: usize,
    pub rms_epsilon: f32,
    pub context_length: usize,
    /// What query-key products are multiplied by before the softmax (one over the square
    /// root of the head's width, for most).
    pub attention_scale: f32,
    /// Gemma 2's soft cap on attention scores, `cap · tanh(score / cap)`.
    pub attention_cap: Option<f32>,
    /// Gemma 2's soft cap on the final logits.
    pub logit_cap: Option<f32>,
    /// Gemma's factor on the embeddings (the square root of the width).
    pub embedding_scale: Option<f32>,
    pub activation: Activation,
    /// How many positions a sliding-window layer sees, its own included.
    pub window: usize,
    /// Which layers attend through the sliding window.
    pub sliding: Vec<bool>,
}

impl Config {
    /// The width of a token's queries: every head's (the model's width, but for Qwen3 and
    /// Gemma).
    pub(crate) fn q_dim(&self) -> usize {
        self.heads * self.head_dim
    }

    /// The width of a token's keys, and of its values.
    pub(crate) fn kv_dim(&self) -> usize {
        self.kv_heads * self.head_dim
    }

    /// The sliding window of layer `index`, if it has one.
    pub(crate) fn window_of(&self, index: usize) -> Option<usize> {
        self.sliding.get(index).copied().unwrap_or(false).then_some(self.window)
    }

    pub(crate) fn read(content: &Content) -> Result<Config, LocalError> {
        let name = string(content, "general.architecture").unwrap_or_default();
        let architecture = Architecture::named(&name).ok_or_else(|| {
            LocalError::Model(format!(
                "architecture `{name}` is not supported; these are: {}",
                Architecture::NAMES
            ))
        })?;
        let key = |name: &str| architecture.key(name);
        let required = |name: &str| {
            let key = key(name);
            number(content, &key)
                .filter(|n| *n > 0)
                .ok_or_else(|| LocalError::Model(format!("the GGUF file has no `{key}`")))
        };
        if number(content, &key("expert_count")).unwrap_or(0) > 1 {
            return Err(LocalError::Model("mixture-of-experts models are not supported".into()));
        }
        let dim = required("embedding_length")?;
        let heads = required("attention.head_count")?;
        let layers = required("block_count")?;
        let kv_heads = number(content, &key("attention.head_count_kv")).unwrap_or(heads);
        // A head is the model's width over its heads, unless the file says otherwise.
        let head_dim = number(content, &key("attention.key_length")).unwrap_or(dim / heads.max(1));
        let value_dim = number(content, &key("attention.value_length")).unwrap_or(head_dim);
        if head_dim == 0
            || value_dim != head_dim
            || kv_heads == 0
            || heads % kv_heads != 0
            || dim % 32 != 0
            || !(heads * head_dim).is_multiple_of(32)
        {
            return Err(LocalError::Model(format!(
                "unsupported attention shape: width {dim}, {heads} heads of {head_dim}, {kv_heads} key/value heads"
            )));
        }
        let gemma = architecture.is_gemma();
        // Gemma's largest models scale queries by their width over their heads instead (its
        // reference code's `query_pre_attn_scalar`; llama.cpp tells them by layer count).
        let largest_gemma = matches!(
            (architecture, layers),
            (Architecture::Gemma2, 46) | (Architecture::Gemma3, 62)
        );
        let scaled_width = if largest_gemma { dim / heads } else { head_dim };
        let (attention_cap, logit_cap) = if architecture == Architecture::Gemma2 {
            (
                Some(float(content, &key("attn_logit_softcapping")).unwrap_or(50.0)),
                Some(float(content, &key("final_logit_softcapping")).unwrap_or(30.0)),
            )
        } else {
            (None, None)
        };
        let (window, sliding) = match architecture.sliding_period() {
            Some(period) => {
                let window = match architecture {
                    // Gemma 2's files may leave out its window.
                    Architecture::Gemma2 => {
                        number(content, &key("attention.sliding_window")).unwrap_or(4096)
                    }
                    _ => required("attention.sliding_window")?,
                };
                if window == 0 {
                    return Err(LocalError::Model("a sliding window of no positions".into()));
                }
                (
                    window,
                    sliding_layers(
                        content,
                        &key("attention.sliding_window_pattern"),
                        period,
                        layers,
                    )?,
                )
            }
            None => (0, vec![false; layers]),
        };
        Ok(Config {
            architecture,
            dim,
            heads,
            kv_heads,
            head_dim,
            layers,
            rms_epsilon: float(content, &key("attention.layer_norm_rms_epsilon")).unwrap_or(1e-5),
            context_length: number(content, &key("context_length")).unwrap_or(2048),
            attention_scale: 1.0 / (scaled_width as f32).sqrt(),
            attention_cap,
            logit_cap,
            embedding_scale: gemma.then(|| (dim as f32).sqrt()),
            activation: if gemma { Activation::Gelu } else { Activation::Silu },
            window,
            sliding,
        })
    }

    /// The rotary embeddings: the one every layer uses, and the sliding-window layers' own
    /// when it differs (Gemma 3's: base 10,000, unscaled). `factors` are the file's
    /// frequency factors (`rope_freqs`, or Phi-3's short `rope_factors_short`), one per
    /// rotated pair.
    pub(crate) fn ropes(
        &self,
        content: &Content,
        factors: Option<&[f32]>,
    ) -> Result<(Rope, Option<Rope>), LocalError> {
        let key = |name: &str| self.architecture.key(name);
        let dims = number(content, &key("rope.dimension_count")).unwrap_or(self.head_dim);
        if dims > self.head_dim || dims % 2 == 1 {
            return Err(LocalError::Model(format!(
                "a rotary embedding over {dims} of {} values per head is not supported",
                self.head_dim
            )));
        }
        if let Some(factors) = factors
            && factors.len() != dims / 2
        {
            return Err(LocalError::Model(format!(
                "{} rotary frequency factors for {} rotated pairs",
                factors.len(),
                dims / 2
            )));
        }
        let base = float(content, &key("rope.freq_base")).unwrap_or(10_000.0);
        let factor = float(content, &key("rope.scaling.factor")).unwrap_or(1.0);
        let scale = match string(content, &key("rope.scaling.type")).as_deref() {
            // Linear when the file names no type, as llama.cpp reads it.
            None | Some("linear") => factor,
            // Llama 3.1's scaling lives in its `rope_freqs`.
            Some("none" | "llama3") => 1.0,
            Some(_) if factor <= 1.0 => 1.0,
            Some(other) => {
                return Err(LocalError::Model(format!(
                    "rotary embedding scaling `{other}` is not supported"
                )));
            }
        };
        let attention_factor = float(content, &key("rope.scaling.attn_factor")).unwrap_or(1.0);
        let layout = self.architecture.rope_layout();
        let global = Rope::new(dims, base, scale, factors, attention_factor, layout);
        let sliding = (self.architecture == Architecture::Gemma3).then(|| {
            let base = float(content, &key("rope.freq_base_swa")).unwrap_or(10_000.0);
            Rope::new(dims, base, 1.0, factors, attention_factor, layout)
        });
        Ok((global, sliding))
    }

    /// A model with longrope's long factors as well as its short ones (Phi-3's 128k models)
    /// gets its context cut to the one it was trained on, where the short factors are right.
    pub(crate) fn keep_to_trained_context(&mut self, content: &Content) {
        let key = self.architecture.key("rope.scaling.original_context_length");
        if let Some(trained) = number(content, &key) {
            self.context_length = self.context_length.min(trained);
        }
    }
}

/// Which of `layers` layers slide: the file's `sliding_window_pattern` (a period, or a flag
/// per layer) or the family's `period`, where the last layer of each period does not.
fn sliding_layers(
    content: &Content,
    key: &str,
    period: usize,
    layers: usize,
) -> Result<Vec<bool>, LocalError> {
    let period = match content.metadata.get(key) {
        Some(Value::Array(flags)) => {
            if flags.len() != layers {
                return Err(LocalError::Model(format!(
                    "`{key}` has {} entries for {layers} layers",
                    flags.len()
                )));
            }
            return Ok(flags
                .iter()
                .map(|flag| match flag {
                    Value::Bool(slides) => *slides,
                    other => other.as_i64().is_some_and(|n| n != 0),
                })
                .collect());
        }
        Some(_) => number(content, key).unwrap_or(period),
        None => period,
    };
    Ok((0..layers).map(|i| period > 1 && i % period < period - 1).collect())
}

fn number(content: &Content, key: &str) -> Option<usize> {
    crate::metadata::number(content, key).map(|n| n as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The metadata of a small Gemma 3 model, with `changes` applied.
    fn gemma3(changes: &[(&str, Value)]) -> Content {
        let mut metadata: std::collections::HashMap<String, Value> = [
            ("general.architecture", Value::String("gemma3".into())),
            ("gemma3.embedding_length", Value::U32(64)),
            ("gemma3.attention.head_count", Value::U32(4)),
            ("gemma3.block_count", Value::U32(6)),
            ("gemma3.attention.sliding_window", Value::U32(5)),
        ]
        .into_iter()
        .map(|(key, value)| (key.to_owned(), value))
        .collect();
        for (key, value) in changes {
            metadata.insert((*key).to_owned(), value.clone());
        }
        Content { metadata, ..Content::default() }
    }

    fn refusal(content: &Content) -> String {
        match Config::read(content).and_then(|config| config.ropes(content, None).map(|_| ())) {
            Ok(()) => String::new(),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn gemma3_slides_five_layers_in_six_unless_the_file_says_otherwise() {
        let config = Config::read(&gemma3(&[])).unwrap();
        assert_eq!(config.sliding, [true, true, true, true, true, false]);
        assert_eq!(config.window_of(0), Some(5));
        assert_eq!(config.window_of(5), None);
        let period = gemma3(&[("gemma3.attention.sliding_window_pattern", Value::U32(2))]);
        assert_eq!(Config::read(&period).unwrap().sliding, [true, false, true, false, true, false]);
        let flags =
            Value::Array([true, false, false, false, false, true].map(Value::Bool).to_vec());
        let flagged = gemma3(&[("gemma3.attention.sliding_window_pattern", flags)]);
        assert_eq!(
            Config::read(&flagged).unwrap().sliding,
            [true, false, false, false, false, true]
        );
    }

    #[test]
    fn shapes_and_settings_the_engine_cannot_run_are_refused() {
        // A window of no positions: Gemma 3 requires a window, Gemma 2 defaults to 4096.
        let no_window = gemma3(&[("gemma3.attention.sliding_window", Value::U32(0))]);
        assert!(
            refusal(&no_window).contains("attention.sliding_window"),
            "{}",
            refusal(&no_window)
        );
        let mut gemma2 = gemma3(&[]);
        gemma2.metadata = std::mem::take(&mut gemma2.metadata)
            .into_iter()
            .map(|(key, value)| (key.replace("gemma3", "gemma2"), value))
            .collect();
        gemma2.metadata.insert("general.architecture".into(), Value::String("gemma2".into()));
        assert_eq!(refusal(&gemma2), "");
        gemma2.metadata.insert("gemma2.attention.sliding_window".into(), Value::U32(0));
        assert!(
            refusal(&gemma2).contains("a sliding window of no positions"),
            "{}",
            refusal(&gemma2)
        );
        let short_pattern = gemma3(&[(
            "gemma3.attention.sliding_window_pattern",
            Value::Array(vec![Value::Bool(true)]),
        )]);
        assert!(refusal(&short_pattern).contains("1 entries for 6 layers"));
        let yarn = gemma3(&[
            ("gemma3.rope.scaling.type", Value::String("yarn".into())),
            ("gemma3.rope.scaling.factor", Value::F32(4.0)),
        ]);
        assert!(refusal(&yarn).contains("`yarn` is not supported"), "{}", refusal(&yarn));
        let content = gemma3(&[]);
        let config = Config::read(&content).unwrap();
        let factors = [1.0; 3];
        let error = config.ropes(&content, Some(&factors)).unwrap_err().to_string();
        assert!(error.contains("3 rotary frequency factors for 8 rotated pairs"), "{error}");
        assert_eq!(refusal(&gemma3(&[])), "");
    }

    #[test]
    fn a_scaling_type_of_none_leaves_the_frequencies_and_linear_divides_them() {
        let angle = |scaling: &str| {
            let content = gemma3(&[
                ("gemma3.rope.scaling.type", Value::String(scaling.into())),
                ("gemma3.rope.scaling.factor", Value::F32(8.0)),
            ]);
            let config = Config::read(&content).unwrap();
            let (global, sliding) = config.ropes(&content, None).unwrap();
            // The first pair turns by the position times its frequency (1 at index 0).
            let turned = |rope: &Rope| rope.angles(1)[0].1.asin();
            (turned(&global), sliding.map(|rope| turned(&rope)))
        };
        let (linear, linear_sliding) = angle("linear");
        let (none, none_sliding) = angle("none");
        assert!((linear - 1.0 / 8.0).abs() < 1e-6, "{linear}");
        assert!((none - 1.0).abs() < 1e-6, "{none}");
        // Gemma 3's sliding layers are never scaled.
        assert_eq!(linear_sliding, none_sliding);
    }

    #[test]
    fn longrope_files_keep_to_their_trained_context() {
        let content = gemma3(&[
            ("gemma3.context_length", Value::U32(131_072)),
            ("gemma3.rope.scaling.original_context_length", Value::U32(4096)),
        ]);
        let mut config = Config::read(&content).unwrap();
        config.keep_to_trained_context(&content);
        assert_eq!(config.context_length, 4096);
    }
}
