#!/usr/bin/env python3
"""Compares the local engine with llama.cpp (llama-cpp-python) on a GGUF file: the tokens of a
set of texts, and after each text the ten highest logits, then after each of three greedy
tokens fed one at a time. For architectures and tokenizers checked on a real file (Gemma 3,
whose file the test command does not fetch); SmolLM2's comparison is a test of its own.

usage: scripts/compare_llama_cpp.py MODEL.gguf [LLAMA_PYTHON=target/llama-cpp-python/bin/python]

LLAMA_PYTHON is a Python with `llama-cpp-python==0.3.36` (a source build of some minutes, so the
test command does not make it: `python3 -m venv target/llama-cpp-python && CMAKE_ARGS="-DGGML_NATIVE=OFF"
target/llama-cpp-python/bin/pip install llama-cpp-python==0.3.36`).

Prints one line per text: whether the tokens agree, the greedy tokens of both, and the largest
difference between the logits of the tokens both put in their top ten.
"""
import json, os, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEXTS = [
    "The capital of France is",
    "Why is the sky blue? Because",
    "def fibonacci(n):\n    ",
    "<start_of_turn>user\nWrite a haiku about the sea.<end_of_turn>\n<start_of_turn>model\n",
    "Résume en une phrase : le chat dort sur le canapé.",
    "東京は日本の首都です。大阪は",
    "  indented   spaces\tand\ttabs\n\n",
]
LLAMA_CPP = """
import json, sys
import numpy as np
from llama_cpp import Llama
model, texts, add_bos = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3] == "bos"
m = Llama(model, n_ctx=512, n_threads=2, logits_all=True, verbose=False)
cases = []
for text in texts:
    tokens = m.tokenize(text.encode(), add_bos=add_bos, special=True)
    m.reset()
    steps, feed = [], list(tokens)
    for _ in range(4):
        m.eval(feed)
        logits = np.array(m.scores[m.n_tokens - 1])
        top = np.argsort(-logits)[:10]
        steps.append({"fed": [int(t) for t in feed], "top": [[int(t), float(logits[t])] for t in top]})
        feed = [int(top[0])]
    cases.append({"text": text, "tokens": [int(t) for t in tokens], "steps": steps})
print(json.dumps(cases))
"""


def llama_cpp_steps(model, texts, python, add_bos=True):
    """llama.cpp's tokens for each text (control tokens matched), and its ten best logits after
    the text, then after each of three greedy tokens fed one at a time."""
    run = [python, "-c", LLAMA_CPP, model, json.dumps(texts), "bos" if add_bos else "no-bos"]
    return json.loads(subprocess.run(run, capture_output=True, text=True, check=True).stdout)


def main():
    model = os.path.abspath(sys.argv[1])
    python = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "target/llama-cpp-python/bin/python")
    theirs = llama_cpp_steps(model, TEXTS, python)
    ours = json.loads(subprocess.run(
        ["cargo", "run", "-q", "--release", "-p", "llmtool-local", "--example", "top_logits", "--", model],
        input=json.dumps(TEXTS), capture_output=True, text=True, check=True, cwd=ROOT).stdout)
    for a, b in zip(ours, theirs):
        greedy = lambda case: [step["top"][0][0] for step in case["steps"]]
        worst = 0.0
        for sa, sb in zip(a["steps"], b["steps"]):
            mine = dict((t, v) for t, v in sa["top"])
            worst = max([worst] + [abs(mine[t] - v) for t, v in sb["top"] if t in mine])
        print(json.dumps({"text": a["text"][:40], "same tokens": a["tokens"] == b["tokens"],
                          "greedy (ours, llama.cpp)": [greedy(a), greedy(b)], "largest logit difference": round(worst, 3)},
                         ensure_ascii=False))


if __name__ == "__main__":
    main()
