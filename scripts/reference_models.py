#!/usr/bin/env python3
"""Tiny random-weight GGUF models of the architectures the local engine runs, each with the
logits a plain NumPy forward pass (written here from the architectures' papers and llama.cpp's
conventions, not from llmtool) gives for a fixed run of tokens.

usage: scripts/reference_models.py OUT_DIR

Writes OUT_DIR/ARCH.gguf and OUT_DIR/ARCH.json ({"steps": [{"fed": [...], "logits": [...]}]}:
a prompt fed at once, then tokens one at a time, the last token's logits after each step).

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
REQUIREMENTS = ["gguf==0.19.0", "numpy"]


def python():
    """The virtual environment's Python, made (with gguf and NumPy) the first time."""
    path = os.path.join(VENV, "bin", "python")
    probe = [path, "-c", "import gguf, numpy"]
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


def rope(x, positions, dims, base, layout, factors=None):
    """Rotary embedding over the first `dims` values of each head. `halves` pairs value i with
    value i + dims/2 (GPT-NeoX's layout, which Qwen2 keeps in GGUF); `pairs` pairs neighbours
    (llama's GGUF layout). `factors` (llama 3.1's rope_freqs) divide the frequencies."""
    half = dims // 2
    inverse = 1.0 / base ** (np.arange(half, dtype=np.float64) * 2 / dims)
    if factors is not None:
        inverse = inverse / factors.astype(np.float64)
    angles = positions[:, None].astype(np.float64) * inverse[None, :]
    cos, sin = np.cos(angles)[:, None, :], np.sin(angles)[:, None, :]
    x64 = x.astype(np.float64)
    if layout == "halves":
        a, b = x64[..., :half], x64[..., half:dims]
        turned = np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)
    else:
        a, b = x64[..., 0:dims:2], x64[..., 1:dims:2]
        turned = np.stack([a * cos - b * sin, a * sin + b * cos], axis=-1).reshape(a.shape[:-1] + (dims,))
    return np.concatenate([turned, x64[..., dims:]], axis=-1).astype(np.float32)


def forward(w, hp, tokens):
    """Every position's logits for `tokens` (a causal pass from position 0)."""
    n = len(tokens)
    heads, kv_heads, head_dim = hp["heads"], hp["kv_heads"], head_width(hp)
    x = w["token_embd.weight"][tokens].astype(np.float32)
    positions = np.arange(n)
    mask = np.triu(np.full((n, n), -np.inf, dtype=np.float32), 1)
    for i in range(hp["layers"]):
        p = lambda name: w[f"blk.{i}.{name}"]
        h = rms_norm(x, p("attn_norm.weight"), hp["eps"])
        bias = lambda name: w.get(f"blk.{i}.{name}.bias", 0.0)
        q = h @ p("attn_q.weight").T + bias("attn_q")
        k = h @ p("attn_k.weight").T + bias("attn_k")
        v = h @ p("attn_v.weight").T + bias("attn_v")
        turn = lambda x: rope(x, positions, head_dim, hp["rope_base"], hp["rope_layout"], w.get("rope_freqs.weight"))
        q, k = q.reshape(n, heads, head_dim), k.reshape(n, kv_heads, head_dim)
        if f"blk.{i}.attn_q_norm.weight" in w:
            q = rms_norm(q, p("attn_q_norm.weight"), hp["eps"])
            k = rms_norm(k, p("attn_k_norm.weight"), hp["eps"])
        q, k = turn(q), turn(k)
        v = v.reshape(n, kv_heads, head_dim)
        out = np.zeros((n, heads, head_dim), dtype=np.float32)
        for head in range(heads):
            shared = head // (heads // kv_heads)
            scores = q[:, head, :] @ k[:, shared, :].T / np.sqrt(head_dim) + mask
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            out[:, head, :] = (scores / scores.sum(axis=-1, keepdims=True)) @ v[:, shared, :]
        x = x + out.reshape(n, -1) @ p("attn_output.weight").T
        h = rms_norm(x, p("ffn_norm.weight"), hp["eps"])
        gate = h @ p("ffn_gate.weight").T
        x = x + (gate / (1 + np.exp(-gate)) * (h @ p("ffn_up.weight").T)) @ p("ffn_down.weight").T
    x = rms_norm(x, w["output_norm.weight"], hp["eps"])
    return x @ w.get("output.weight", w["token_embd.weight"]).T


def normal(*shape, scale=0.2):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def head_width(hp):
    return hp.get("head_dim", hp["dim"] // hp["heads"])


def weights(hp, biases=False, qk_norms=False):
    """Random weights of the llama block's shapes, with query/key/value biases or per-head
    query/key norms if asked."""
    dim, ffn, head_dim = hp["dim"], hp["ffn"], head_width(hp)
    q_dim, kv_dim = head_dim * hp["heads"], head_dim * hp["kv_heads"]
    w = {"token_embd.weight": normal(VOCAB, dim, scale=1.0), "output_norm.weight": 1 + normal(dim, scale=0.1)}
    for i in range(hp["layers"]):
        w.update({
            f"blk.{i}.attn_norm.weight": 1 + normal(dim, scale=0.1),
            f"blk.{i}.attn_q.weight": normal(q_dim, dim),
            f"blk.{i}.attn_k.weight": normal(kv_dim, dim),
            f"blk.{i}.attn_v.weight": normal(kv_dim, dim),
            f"blk.{i}.attn_output.weight": normal(dim, q_dim),
            f"blk.{i}.ffn_norm.weight": 1 + normal(dim, scale=0.1),
            f"blk.{i}.ffn_gate.weight": normal(ffn, dim), f"blk.{i}.ffn_up.weight": normal(ffn, dim),
            f"blk.{i}.ffn_down.weight": normal(dim, ffn),
        })
        if biases:
            w.update({f"blk.{i}.attn_q.bias": normal(q_dim), f"blk.{i}.attn_k.bias": normal(kv_dim), f"blk.{i}.attn_v.bias": normal(kv_dim)})
        if qk_norms:
            w.update({f"blk.{i}.attn_q_norm.weight": 1 + normal(head_dim, scale=0.1), f"blk.{i}.attn_k_norm.weight": 1 + normal(head_dim, scale=0.1)})
    return w


def write(name, arch, w, hp, pre):
    """The model as llama.cpp's converter writes one: hyperparameters under `arch.`, a GPT-2
    style byte-level tokenizer with the pre-tokenizer `pre`, matrices in Q8_0 (`w` keeps
    their dequantized values for the reference), vectors in F32."""
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
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre(pre)
    writer.add_token_list(TOKENS)
    writer.add_token_types([gguf.TokenType.NORMAL] * (256 + len(MERGES)) + [gguf.TokenType.CONTROL] * len(SPECIALS))
    writer.add_token_merges(MERGES)
    writer.add_eos_token_id(TOKENS.index("<|im_end|>"))
    writer.add_bos_token_id(TOKENS.index("<|endoftext|>"))
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
    write("qwen2", "qwen2", w, hp, "qwen2")
    return w, hp


def qwen3():
    """Qwen3: no biases, but an RMS norm over each head's query and key before the rotary
    embedding (the halves layout); heads of 32 on a width of 64, so queries are wider than
    the model."""
    hp = {"dim": 64, "heads": 4, "kv_heads": 2, "head_dim": 32, "layers": 2, "ffn": 128, "eps": 1e-6,
          "rope_base": 1_000_000.0, "rope_layout": "halves", "context": 256}
    w = weights(hp, qk_norms=True)
    write("qwen3", "qwen3", w, hp, "qwen2")
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
    write("llama3", "llama", w, hp, "llama-bpe")
    return w, hp


def steps(w, hp):
    """A prompt of twelve tokens at once, then four more one at a time."""
    tokens = [int(t) for t in rng.integers(0, VOCAB, 16)]
    logits = forward(w, hp, np.array(tokens))
    fed = [tokens[:12]] + [[t] for t in tokens[12:]]
    ends = [12, 13, 14, 15, 16]
    return [{"fed": f, "logits": [float(v) for v in logits[end - 1]]} for f, end in zip(fed, ends)]


# Where each block format keeps its f16 scales (byte offsets in the block): a random f16 could
# be infinite or NaN.
SCALES = {"Q4_0": [0], "Q4_1": [0, 2], "Q5_0": [0], "Q5_1": [0, 2], "Q8_0": [0],
          "Q2_K": [80, 82], "Q3_K": [108], "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [208]}


def quants():
    """One 4 x 512 matrix per format, and its values as gguf dequantizes them (from a
    generator of their own, so the models do not change with this list)."""
    rng = np.random.default_rng(20261128)
    writer = gguf.GGUFWriter(os.path.join(out, "quants.gguf"), "llama")
    values = {}
    for name in [*SCALES, "F16", "BF16"]:
        qtype = gguf.GGMLQuantizationType[name]
        if name in SCALES:
            count, size = gguf.GGML_QUANT_SIZES[qtype]
            blocks = rng.integers(0, 256, (4 * 512 // count, size), dtype=np.uint8)
            for at in SCALES[name]:
                scales = rng.uniform(0.001, 0.02, len(blocks)).astype(np.float16)
                blocks[:, at:at + 2] = scales.view(np.uint8).reshape(-1, 2)
            data = blocks.reshape(4, -1)
        else:
            data = gguf.quants.quantize(rng.normal(size=(4, 512)).astype(np.float32), qtype)
        writer.add_tensor(name, data, raw_shape=data.shape, raw_dtype=qtype)
        values[name] = [float(v) for v in gguf.quants.dequantize(data, qtype).reshape(-1)]
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    json.dump(values, open(os.path.join(out, "quants.json"), "w"))


quants()
for name, make in [("qwen2", qwen2), ("qwen3", qwen3), ("llama3", llama3)]:
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
