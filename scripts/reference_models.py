#!/usr/bin/env python3
"""Tiny random-weight GGUF models of the architectures the local engine runs, each with the
logits a plain NumPy forward pass (written here from the architectures' papers and llama.cpp's
conventions, not from llmtool) gives for a fixed run of tokens.

usage: scripts/reference_models.py OUT_DIR

Writes OUT_DIR/ARCH.gguf and OUT_DIR/ARCH.json ({"steps": [{"fed": [...], "logits": [...]}]}:
a prompt fed at once, then tokens one at a time, the last token's logits after each step).

The Gemma and Phi-3 models carry a SentencePiece vocabulary trained here by the
`sentencepiece` package (Google's own library), and OUT_DIR/ARCH-tokens.json holds how that
library splits a set of texts (Gemma 3's and Phi-3's): the engine's tokenizer is checked against it.

Also OUT_DIR/quants.gguf, one matrix per stored format (random bytes with sane scales for the
block formats, so every bit of a block is used), and OUT_DIR/quants.json, each matrix's values
as the `gguf` package's own dequantizer gives them: the engine's reading of each format is
checked against it.
The files are made by the `gguf` package (llama.cpp's own writer) in a virtual environment
of their own under target/, so the test command needs nothing installed beforehand.
"""
import json, os, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, "target", "reference-models-venv")
REQUIREMENTS = ["gguf==0.19.0", "numpy", "sentencepiece==0.2.1"]


def python():
    """The virtual environment's Python, made (with gguf and NumPy) the first time."""
    path = os.path.join(VENV, "bin", "python")
    probe = [path, "-c", "import gguf, numpy, sentencepiece"]
    if os.path.exists(path) and subprocess.run(probe, capture_output=True).returncode == 0:
        return path
    subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    subprocess.run([path, "-m", "pip", "install", "-q", *REQUIREMENTS], check=True)
    return path


MAKE = r'''
import json, os, sys
import numpy as np
import gguf

out = sys.argv[1]
rng = np.random.default_rng(20261127)


def byte_tokens():
    """GPT-2's byte-to-character table: each byte as the character byte-level BPE shows it."""
    shown = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars = shown[:]
    extra = 0
    for b in range(256):
        if b not in shown:
            shown.append(b)
            chars.append(256 + extra)
            extra += 1
    table = dict(zip(shown, chars))
    return [chr(table[b]) for b in range(256)]


SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# Two merges, so that the tokenizer is a real byte-level BPE one.
MERGES = ["Ġ t", "h e"]
TOKENS = byte_tokens() + [m.replace(" ", "") for m in MERGES] + SPECIALS
VOCAB = len(TOKENS)


def rms_norm(x, weight, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def rope(x, positions, dims, base, layout, factors=None, scale=1.0, attn_factor=1.0):
    """Rotary embedding over the first `dims` values of each head (the rest pass unchanged).
    `halves` pairs value i with value i + dims/2 (GPT-NeoX's layout, which Qwen2, Gemma and
    Phi-3 keep in GGUF); `pairs` pairs neighbours (llama's GGUF layout). `factors` (llama 3.1's
    rope_freqs, Phi-3's rope_factors_short) divide the frequencies, as does a linear `scale`
    (Gemma 3's global layers); `attn_factor` (Phi-3's longrope) multiplies the rotated values."""
    half = dims // 2
    inverse = 1.0 / base ** (np.arange(half, dtype=np.float64) * 2 / dims) / scale
    if factors is not None:
        inverse = inverse / factors.astype(np.float64)
    angles = positions[:, None].astype(np.float64) * inverse[None, :]
    cos, sin = np.cos(angles)[:, None, :] * attn_factor, np.sin(angles)[:, None, :] * attn_factor
    x64 = x.astype(np.float64)
    if layout == "halves":
        a, b = x64[..., :half], x64[..., half:dims]
        turned = np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)
    else:
        a, b = x64[..., 0:dims:2], x64[..., 1:dims:2]
        turned = np.stack([a * cos - b * sin, a * sin + b * cos], axis=-1).reshape(a.shape[:-1] + (dims,))
    return np.concatenate([turned, x64[..., dims:]], axis=-1).astype(np.float32)


def gelu(x):
    """GELU in its tanh form, as Gemma (and llama.cpp's ggml_gelu) computes it."""
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def soft_cap(x, cap):
    return x if cap is None else np.tanh(x / cap) * cap


def forward(w, hp, tokens):
    """Every position's logits for `tokens` (a causal pass from position 0). What a family
    changes is in `hp`: Gemma's scaled embeddings, norms after attention and the feed-forward
    block, GELU, soft-capped scores and logits, and sliding-window layers with a rotary
    embedding of their own; Phi-3's fused projections, partial rotary embedding and longrope
    factors."""
    n = len(tokens)
    heads, kv_heads, head_dim = hp["heads"], hp["kv_heads"], head_width(hp)
    x = w["token_embd.weight"][tokens].astype(np.float32)
    if hp.get("embed_scale"):
        x = x * np.float32(np.sqrt(hp["dim"]))
    positions = np.arange(n)
    causal = np.triu(np.full((n, n), -np.inf, dtype=np.float32), 1)
    # A sliding-window layer sees the last `window` positions, its own included.
    distance = positions[:, None] - positions[None, :]
    windowed = np.where(distance >= hp.get("window", n + 1), -np.inf, causal).astype(np.float32)
    factors = w.get("rope_freqs.weight", w.get("rope_factors_short.weight"))
    rope_dims = hp.get("rope_dims", head_dim)
    for i in range(hp["layers"]):
        p = lambda name: w[f"blk.{i}.{name}"]
        sliding = hp.get("sliding", lambda i: False)(i)
        h = rms_norm(x, p("attn_norm.weight"), hp["eps"])
        bias = lambda name: w.get(f"blk.{i}.{name}.bias", 0.0)
        if f"blk.{i}.attn_qkv.weight" in w:
            q, k, v = np.split(h @ p("attn_qkv.weight").T, [heads * head_dim, (heads + kv_heads) * head_dim], axis=-1)
        else:
            q = h @ p("attn_q.weight").T + bias("attn_q")
            k = h @ p("attn_k.weight").T + bias("attn_k")
            v = h @ p("attn_v.weight").T + bias("attn_v")
        if sliding:
            base, scale = hp["rope_base_swa"], 1.0
        else:
            base, scale = hp["rope_base"], hp.get("rope_scale", 1.0)
        turn = lambda x: rope(x, positions, rope_dims, base, hp["rope_layout"], factors, scale, hp.get("attn_factor", 1.0))
        q, k = q.reshape(n, heads, head_dim), k.reshape(n, kv_heads, head_dim)
        if f"blk.{i}.attn_q_norm.weight" in w:
            q = rms_norm(q, p("attn_q_norm.weight"), hp["eps"])
            k = rms_norm(k, p("attn_k_norm.weight"), hp["eps"])
        q, k = turn(q), turn(k)
        v = v.reshape(n, kv_heads, head_dim)
        mask = windowed if sliding else causal
        out = np.zeros((n, heads, head_dim), dtype=np.float32)
        for head in range(heads):
            shared = head // (heads // kv_heads)
            scores = q[:, head, :] @ k[:, shared, :].T * hp.get("attention_scale", 1 / np.sqrt(head_dim))
            scores = soft_cap(scores, hp.get("attn_softcap")) + mask
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            out[:, head, :] = (scores / scores.sum(axis=-1, keepdims=True)) @ v[:, shared, :]
        attended = out.reshape(n, -1) @ p("attn_output.weight").T
        if f"blk.{i}.post_attention_norm.weight" in w:
            attended = rms_norm(attended, p("post_attention_norm.weight"), hp["eps"])
        x = x + attended
        h = rms_norm(x, p("ffn_norm.weight"), hp["eps"])
        if f"blk.{i}.ffn_gate.weight" in w:
            gate, up = h @ p("ffn_gate.weight").T, h @ p("ffn_up.weight").T
        else:
            gate, up = np.split(h @ p("ffn_up.weight").T, 2, axis=-1)
        active = gelu(gate) if hp.get("activation") == "gelu" else gate / (1 + np.exp(-gate))
        fed = (active * up) @ p("ffn_down.weight").T
        if f"blk.{i}.post_ffw_norm.weight" in w:
            fed = rms_norm(fed, p("post_ffw_norm.weight"), hp["eps"])
        x = x + fed
    x = rms_norm(x, w["output_norm.weight"], hp["eps"])
    return soft_cap(x @ w.get("output.weight", w["token_embd.weight"]).T, hp.get("final_softcap"))


def normal(*shape, scale=0.2):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def head_width(hp):
    return hp.get("head_dim", hp["dim"] // hp["heads"])


def weights(hp, vocab=VOCAB, biases=False, qk_norms=False, post_norms=False, fused=False):
    """Random weights of the llama block's shapes, with query/key/value biases, per-head
    query/key norms, norms after attention and the feed-forward block (Gemma's), or the
    query/key/value and gate/up projections fused into one matrix each (Phi-3's) if asked."""
    dim, ffn, head_dim = hp["dim"], hp["ffn"], head_width(hp)
    q_dim, kv_dim = head_dim * hp["heads"], head_dim * hp["kv_heads"]
    w = {"token_embd.weight": normal(vocab, dim, scale=1.0), "output_norm.weight": 1 + normal(dim, scale=0.1)}
    norm = lambda width: 1 + normal(width, scale=0.1)
    for i in range(hp["layers"]):
        w.update({
            f"blk.{i}.attn_norm.weight": norm(dim),
            f"blk.{i}.attn_output.weight": normal(dim, q_dim),
            f"blk.{i}.ffn_norm.weight": norm(dim),
            f"blk.{i}.ffn_down.weight": normal(dim, ffn),
        })
        if fused:
            w[f"blk.{i}.attn_qkv.weight"] = normal(q_dim + 2 * kv_dim, dim)
            w[f"blk.{i}.ffn_up.weight"] = normal(2 * ffn, dim)
        else:
            w.update({
                f"blk.{i}.attn_q.weight": normal(q_dim, dim),
                f"blk.{i}.attn_k.weight": normal(kv_dim, dim),
                f"blk.{i}.attn_v.weight": normal(kv_dim, dim),
                f"blk.{i}.ffn_gate.weight": normal(ffn, dim), f"blk.{i}.ffn_up.weight": normal(ffn, dim),
            })
        if biases:
            w.update({f"blk.{i}.attn_q.bias": normal(q_dim), f"blk.{i}.attn_k.bias": normal(kv_dim), f"blk.{i}.attn_v.bias": normal(kv_dim)})
        if qk_norms:
            w.update({f"blk.{i}.attn_q_norm.weight": norm(head_dim), f"blk.{i}.attn_k_norm.weight": norm(head_dim)})
        if post_norms:
            w.update({f"blk.{i}.post_attention_norm.weight": norm(dim), f"blk.{i}.post_ffw_norm.weight": norm(dim)})
    return w


def byte_level_vocabulary(writer, pre):
    """A GPT-2 style byte-level BPE tokenizer with the pre-tokenizer `pre`, ChatML's specials."""
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre(pre)
    writer.add_token_list(TOKENS)
    writer.add_token_types([gguf.TokenType.NORMAL] * (256 + len(MERGES)) + [gguf.TokenType.CONTROL] * len(SPECIALS))
    writer.add_token_merges(MERGES)
    writer.add_eos_token_id(TOKENS.index("<|im_end|>"))
    writer.add_bos_token_id(TOKENS.index("<|endoftext|>"))


# Text to train the SentencePiece vocabularies on: prose, numbers, indented code.
WORDS = ("the sky is blue because air scatters short waves of sunlight more than long ones "
         "a tool renders its prompt with variables and the model answers in one pass "
         "def return class import for while if else print value index result").split()


def corpus():
    rng = np.random.default_rng(7)
    lines = []
    for i in range(600):
        words = [WORDS[j] for j in rng.integers(0, len(WORDS), rng.integers(3, 12))]
        if i % 5 == 0:
            words.append(str(int(rng.integers(0, 100000))))
        indent = "    " * int(rng.integers(0, 3)) if i % 3 == 0 else ""
        lines.append(indent + " ".join(words) + ("." if i % 2 else ""))
    return lines


def sentencepiece_vocabulary(name, dummy_prefix, specials):
    """A SentencePiece BPE model trained by Google's library with the settings llama's and
    Gemma's tokenizers use (byte fallback, no normalization, whitespace kept; a space put
    before the text only if `dummy_prefix`), as llama.cpp's converter writes it into GGUF:
    pieces, scores and types, then the chat's control tokens. Returns the pieces and the
    library's processor."""
    import sentencepiece as spm
    prefix = os.path.join(out, f"{name}-sentencepiece")
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(corpus()), model_prefix=prefix, model_type="bpe", vocab_size=420,
        byte_fallback=True, normalization_rule_name="identity", remove_extra_whitespaces=False,
        add_dummy_prefix=dummy_prefix, split_digits=True, allow_whitespace_only_pieces=True,
        character_coverage=1.0, num_threads=1, minloglevel=2)
    sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
    pieces, scores, types = [], [], []
    for i in range(sp.get_piece_size()):
        pieces.append(sp.id_to_piece(i))
        scores.append(sp.get_score(i))
        types.append(gguf.TokenType.UNKNOWN if sp.is_unknown(i) else gguf.TokenType.CONTROL if sp.is_control(i)
                     else gguf.TokenType.UNUSED if sp.is_unused(i) else gguf.TokenType.BYTE if sp.is_byte(i)
                     else gguf.TokenType.NORMAL)
    for special in specials:
        pieces.append(special)
        scores.append(0.0)
        types.append(gguf.TokenType.CONTROL)
    return {"pieces": pieces, "scores": scores, "types": types, "dummy_prefix": dummy_prefix, "processor": sp}


def write_sentencepiece(writer, vocabulary, eos):
    writer.add_tokenizer_model("llama")
    writer.add_token_list(vocabulary["pieces"])
    writer.add_token_scores(vocabulary["scores"])
    writer.add_token_types(vocabulary["types"])
    writer.add_add_space_prefix(vocabulary["dummy_prefix"])
    writer.add_bos_token_id(vocabulary["pieces"].index("<s>"))
    writer.add_eos_token_id(vocabulary["pieces"].index(eos))
    writer.add_add_bos_token(True)


# Texts whose SentencePiece tokens the engine's tokenizer must reproduce.
TEXTS = ["Hello world", "the sky is blue because air scatters light.", "  two leading spaces",
         "trailing space ", "numbers 12345 and 3.14", "tabs\tand\nnew lines\n\n",
         "naïve café, 東京 and 🌍", "    def value(index):\n        return result + 1", " ", ""]


def tokens_json(name, vocabulary):
    sp = vocabulary["processor"]
    cases = [{"text": t, "ids": sp.encode(t)} for t in TEXTS]
    json.dump(cases, open(os.path.join(out, f"{name}-tokens.json"), "w"), ensure_ascii=False)


def write(name, arch, w, hp, vocabulary, extra=lambda writer: None):
    """The model as llama.cpp's converter writes one: hyperparameters under `arch.`, the
    tokenizer `vocabulary` writes, matrices in Q8_0 (`w` keeps their dequantized values for
    the reference), vectors in F32."""
    writer = gguf.GGUFWriter(os.path.join(out, f"{name}.gguf"), arch)
    writer.add_name(f"random {name}")
    writer.add_context_length(hp["context"])
    writer.add_embedding_length(hp["dim"])
    writer.add_block_count(hp["layers"])
    writer.add_feed_forward_length(hp["ffn"])
    writer.add_head_count(hp["heads"])
    writer.add_head_count_kv(hp["kv_heads"])
    writer.add_rope_freq_base(hp["rope_base"])
    if "head_dim" in hp:
        writer.add_key_length(hp["head_dim"])
        writer.add_value_length(hp["head_dim"])
    writer.add_layer_norm_rms_eps(hp["eps"])
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
    vocabulary(writer)
    extra(writer)
    for tensor_name, tensor in w.items():
        if tensor.ndim == 2:
            # Matrices in Q8_0, as llama.cpp quantizes them; the reference computes with the
            # same values, dequantized, so only the engine's own arithmetic differs.
            Q8_0 = gguf.GGMLQuantizationType.Q8_0
            quantized = gguf.quants.quantize(tensor, Q8_0)
            w[tensor_name] = gguf.quants.dequantize(quantized, Q8_0).reshape(tensor.shape)
            writer.add_tensor(tensor_name, quantized, raw_shape=quantized.shape, raw_dtype=Q8_0)
        else:
            writer.add_tensor(tensor_name, tensor)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def qwen2():
    """Qwen2: biases on q, k and v; the halves rope layout; a large rope base; tied output."""
    hp = {"dim": 64, "heads": 4, "kv_heads": 2, "layers": 2, "ffn": 128, "eps": 1e-6,
          "rope_base": 1_000_000.0, "rope_layout": "halves", "context": 256}
    w = weights(hp, biases=True)
    write("qwen2", "qwen2", w, hp, lambda writer: byte_level_vocabulary(writer, "qwen2"))
    return w, hp


def qwen3():
    """Qwen3: no biases, but an RMS norm over each head's query and key before the rotary
    embedding (the halves layout); heads of 32 on a width of 64, so queries are wider than
    the model."""
    hp = {"dim": 64, "heads": 4, "kv_heads": 2, "head_dim": 32, "layers": 2, "ffn": 128, "eps": 1e-6,
          "rope_base": 1_000_000.0, "rope_layout": "halves", "context": 256}
    w = weights(hp, qk_norms=True)
    write("qwen3", "qwen3", w, hp, lambda writer: byte_level_vocabulary(writer, "qwen2"))
    return w, hp


def llama3():
    """Llama 3.1: no biases; neighbouring pairs rotated; rope_freqs factors on the
    frequencies; its own output matrix."""
    hp = {"dim": 64, "heads": 4, "kv_heads": 1, "layers": 2, "ffn": 96, "eps": 1e-5,
          "rope_base": 500_000.0, "rope_layout": "pairs", "context": 256}
    w = weights(hp)
    head_dim = head_width(hp)
    w["rope_freqs.weight"] = np.linspace(1.0, 8.0, head_dim // 2).astype(np.float32)
    w["output.weight"] = normal(VOCAB, hp["dim"], scale=0.5)
    write("llama3", "llama", w, hp, lambda writer: byte_level_vocabulary(writer, "llama-bpe"))
    return w, hp


GEMMA_SPECIALS = ["<start_of_turn>", "<end_of_turn>"]


def gemma2():
    """Gemma 2: embeddings scaled by the square root of the width, norms after attention and
    after the feed-forward block, GELU, attention scores and final logits soft-capped, every
    other layer (from the first) attending over a sliding window; SentencePiece vocabulary
    without a prefix space; tied output."""
    vocabulary = sentencepiece_vocabulary("gemma2", False, GEMMA_SPECIALS)
    vocab = len(vocabulary["pieces"])
    hp = {"dim": 64, "heads": 4, "kv_heads": 2, "head_dim": 32, "layers": 2, "ffn": 128, "eps": 1e-6,
          "rope_base": 10_000.0, "rope_base_swa": 10_000.0, "rope_layout": "halves", "context": 256,
          "embed_scale": True, "activation": "gelu", "attn_softcap": 5.0, "final_softcap": 20.0,
          "window": 5, "sliding": lambda i: i % 2 == 0}
    w = weights(hp, vocab, post_norms=True)

    def extra(writer):
        writer.add_sliding_window(hp["window"])
        writer.add_attn_logit_softcapping(hp["attn_softcap"])
        writer.add_final_logit_softcapping(hp["final_softcap"])
    write("gemma2", "gemma2", w, hp, lambda writer: write_sentencepiece(writer, vocabulary, "<end_of_turn>"), extra)
    return w, hp


def gemma3():
    """Gemma 3: Gemma 2's block without the soft-capping, with query/key norms; five layers
    in six attend over a sliding window with a rotary base of 10,000, the sixth over
    everything with the file's base and a linear scaling factor (the 4B model's 8)."""
    vocabulary = sentencepiece_vocabulary("gemma3", False, GEMMA_SPECIALS)
    vocab = len(vocabulary["pieces"])
    hp = {"dim": 64, "heads": 4, "kv_heads": 1, "head_dim": 32, "layers": 6, "ffn": 96, "eps": 1e-6,
          "rope_base": 1_000_000.0, "rope_base_swa": 10_000.0, "rope_scale": 8.0, "rope_layout": "halves",
          "context": 256, "embed_scale": True, "activation": "gelu", "window": 5, "sliding": lambda i: i % 6 < 5}
    w = weights(hp, vocab, qk_norms=True, post_norms=True)

    def extra(writer):
        writer.add_sliding_window(hp["window"])
        writer.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        writer.add_rope_scaling_factor(hp["rope_scale"])
    write("gemma3", "gemma3", w, hp, lambda writer: write_sentencepiece(writer, vocabulary, "<end_of_turn>"), extra)
    tokens_json("gemma3", vocabulary)
    return w, hp


def phi3():
    """Phi-3.5: query, key and value in one matrix, gate and up in another; the rotary
    embedding over three quarters of each head (halves layout) with longrope's short factors
    and attention factor; its own output matrix; llama's SentencePiece vocabulary (a space
    before the text)."""
    vocabulary = sentencepiece_vocabulary("phi3", True, ["<|endoftext|>", "<|user|>", "<|assistant|>", "<|end|>"])
    vocab = len(vocabulary["pieces"])
    hp = {"dim": 64, "heads": 4, "kv_heads": 4, "layers": 2, "ffn": 96, "eps": 1e-5,
          "rope_base": 10_000.0, "rope_dims": 12, "rope_layout": "halves", "context": 256,
          "attn_factor": 1.19}
    w = weights(hp, vocab, fused=True)
    # Smaller projections than the other models': the attention factor sharpens the scores,
    # and a random model that sharp turns the 8-bit rounding of its activations into more
    # noise than the comparison allows.
    for i in range(hp["layers"]):
        w[f"blk.{i}.attn_qkv.weight"] *= 0.7
    w["rope_factors_short.weight"] = np.linspace(1.0, 3.0, hp["rope_dims"] // 2).astype(np.float32)
    w["rope_factors_long.weight"] = np.linspace(2.0, 40.0, hp["rope_dims"] // 2).astype(np.float32)
    w["output.weight"] = normal(vocab, hp["dim"], scale=0.5)

    def extra(writer):
        writer.add_rope_dimension_count(hp["rope_dims"])
        writer.add_rope_scaling_attn_factors(hp["attn_factor"])
        writer.add_rope_scaling_orig_ctx_len(64)
    write("phi3", "phi3", w, hp, lambda writer: write_sentencepiece(writer, vocabulary, "<|endoftext|>"), extra)
    tokens_json("phi3", vocabulary)
    return w, hp


def steps(w, hp):
    """A prompt of twelve tokens at once, then four more one at a time."""
    tokens = [int(t) for t in rng.integers(0, len(w["token_embd.weight"]), 16)]
    logits = forward(w, hp, np.array(tokens))
    fed = [tokens[:12]] + [[t] for t in tokens[12:]]
    ends = [12, 13, 14, 15, 16]
    return [{"fed": f, "logits": [float(v) for v in logits[end - 1]]} for f, end in zip(fed, ends)]


# Where each block format keeps its f16 scales (byte offsets in the block): a random f16 could
# be infinite or NaN.
SCALES = {"Q4_0": [0], "Q4_1": [0, 2], "Q5_0": [0], "Q5_1": [0, 2], "Q8_0": [0],
          "Q2_K": [80, 82], "Q3_K": [108], "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [208]}


def quants():
    """One 8 x 512 matrix per format (eight rows: a group the engine regroups), and its values
    as gguf dequantizes them (from a generator of their own, so the models do not change with
    this list)."""
    rng = np.random.default_rng(20261128)
    writer = gguf.GGUFWriter(os.path.join(out, "quants.gguf"), "llama")
    values = {}
    for name in [*SCALES, "F16", "BF16"]:
        qtype = gguf.GGMLQuantizationType[name]
        if name in SCALES:
            count, size = gguf.GGML_QUANT_SIZES[qtype]
            blocks = rng.integers(0, 256, (8 * 512 // count, size), dtype=np.uint8)
            for at in SCALES[name]:
                scales = rng.uniform(0.001, 0.02, len(blocks)).astype(np.float16)
                blocks[:, at:at + 2] = scales.view(np.uint8).reshape(-1, 2)
            data = blocks.reshape(8, -1)
        else:
            data = gguf.quants.quantize(rng.normal(size=(8, 512)).astype(np.float32), qtype)
        writer.add_tensor(name, data, raw_shape=data.shape, raw_dtype=qtype)
        values[name] = [float(v) for v in gguf.quants.dequantize(data, qtype).reshape(-1)]
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    json.dump(values, open(os.path.join(out, "quants.json"), "w"))


quants()
for name, make in [("qwen2", qwen2), ("qwen3", qwen3), ("llama3", llama3), ("gemma2", gemma2), ("gemma3", gemma3), ("phi3", phi3)]:
    w, hp = make()
    json.dump({"architecture": name, "steps": steps(w, hp)}, open(os.path.join(out, f"{name}.json"), "w"))
    print(name)
'''


def main():
    out = os.path.abspath(sys.argv[1])
    os.makedirs(out, exist_ok=True)
    subprocess.run([python(), "-c", MAKE, out], check=True)


if __name__ == "__main__":
    main()
