#!/usr/bin/env python3
"""Writes a folder of generated tool files for the check benchmarks, the same for a given seed.

usage: bench/corpus.py DIR [FILES=1000] [SEED=7]

Each file is a prompt tool of the JSON Format for LLM Tools: a prompt of several sentences
(some in other scripts: Korean, Japanese, Greek, accented Latin, emoji) that uses its variables,
two to six variables of the three types (selects with allowed values and defaults), models,
parameters, a creator, an expected output and a timestamp. About a third carry a real 32x32 PNG
avatar in base64, which `check` decodes. About one in twenty has a problem `check` reports: a
placeholder no variable declares, or a variable the prompt never uses. The test command's
guard (bench/check_guard.py) and bench/check.sh read these files.
"""
import base64, json, os, random, struct, sys, zlib

WORDS = ("summarize review draft translate explain outline compare critique rewrite classify "
         "extract estimate plan report lesson essay poem story email contract policy schema "
         "query dataset function commit test design recipe article invoice strategy").split()
SCRIPTS = ["한국어로 설명해 주세요", "日本語で答えてください", "Ελληνικά κείμενα",
           "crème brûlée, façade, niño", "🚀 ✨ 📎", "Привет, мир"]
MODELS = ["gpt-4o-mini", "gpt-4.1", "claude-sonnet-4", "gemini-2.5-pro", "llama-3.1-8b"]
OUTPUTS = ["text", "text", "code", "limited"]


def png(rng):
    """A 32x32 RGB PNG of random pixels: a valid image, as a real avatar is."""
    size = 32
    rows = b"".join(b"\x00" + bytes(rng.randrange(256) for _ in range(size * 3)) for _ in range(size))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def sentence(rng):
    words = [rng.choice(WORDS) for _ in range(rng.randrange(6, 18))]
    return " ".join(words).capitalize() + "."


def variable(rng, index):
    kind = rng.choice(["text", "text", "single-select", "multi-select"])
    name = f"{rng.choice(WORDS)}_{index}"
    declared = {"name": name, "type": kind, "description": sentence(rng)}
    if kind != "text":
        values = rng.sample(WORDS, rng.randrange(2, 6))
        declared["allowed_values"] = values
        declared["default"] = values[0] if kind == "single-select" else values[:1]
    return declared


def output(rng):
    kind = rng.choice(OUTPUTS)
    if kind == "code":
        return {"type": "code", "language": rng.choice(["python", "sql", "rust"])}
    if kind == "limited":
        return {"type": "limited", "allowed_values": rng.sample(WORDS, 3)}
    return {"type": "text"}


def tool(rng, number):
    variables = [variable(rng, index) for index in range(rng.randrange(2, 7))]
    used = [v["name"] for v in variables]
    problem = rng.random() < 0.05
    if problem and rng.random() < 0.5:
        used.append("undeclared_value")
    elif problem:
        used.pop()
    parts = []
    for name in used:
        parts.append(" ".join(sentence(rng) for _ in range(rng.randrange(1, 4))))
        if rng.random() < 0.4:
            parts.append(rng.choice(SCRIPTS))
        parts.append("{{" + name + "}}")
    parts.append(sentence(rng))
    metadata = {
        "prompt_name": f"{rng.choice(WORDS).capitalize()} {rng.choice(WORDS)} #{number}",
        "description": " ".join(sentence(rng) for _ in range(2)),
        "usage_notes": sentence(rng),
        "model_version": rng.sample(MODELS, rng.randrange(1, 3)),
        "creator": {"name": f"Author {number % 50}", "email": f"author{number % 50}@example.org"},
        "parameters": {"temperature": round(rng.random(), 2), "max_tokens": rng.choice([256, 512, 1024])},
        "variables": variables,
        "expected_output": output(rng),
        "timestamp": f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}T10:00:00Z",
    }
    if rng.random() < 1 / 3:
        metadata["avatar_type"] = "base64"
        metadata["avatar"] = base64.b64encode(png(rng)).decode()
    return {"version": "1.0", "model_prompt": " ".join(parts), "metadata": metadata}


def main():
    folder = sys.argv[1]
    files = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 7)
    os.makedirs(folder, exist_ok=True)
    for number in range(files):
        with open(os.path.join(folder, f"tool-{number:05d}.json"), "w", encoding="utf-8") as out:
            json.dump(tool(rng, number), out, ensure_ascii=False, indent=2)


if __name__ == "__main__":
    main()
