#!/usr/bin/env python3
"""Writes crates/llmtool-local/tests/fixtures/smollm2-logits.json: llama.cpp's logits for the
default model (an independent implementation, through llama-cpp-python), which the local
engine's tests compare with.

usage: scripts/reference_logits.py MODEL.gguf [LLAMA_PYTHON=target/llama-cpp-python/bin/python]

For each prompt (chat-formatted, several scripts), the prompt is run in one batch, then three
tokens (llama.cpp's greedy choices) one at a time; after each step the ten highest logits are
kept with their token ids.
"""
import json, os, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
model = os.path.abspath(sys.argv[1])
python = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "target/llama-cpp-python/bin/python")
PROMPTS = [
    "What is the capital of France?",
    "Write a haiku about the sea.",
    "Résume en une phrase : le chat dort sur le canapé.",
    "다음 문장을 요약하세요: 오늘은 날씨가 맑습니다.",
    "List three prime numbers as JSON.",
    "def fibonacci(n):",
]
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from compare_llama_cpp import llama_cpp_steps

texts = ["<|im_start|>user\n" + prompt + "<|im_end|>\n<|im_start|>assistant\n" for prompt in PROMPTS]
cases = [
    {"prompt": prompt, "steps": [{"fed": step["fed"], "top": [[t, round(v, 4)] for t, v in step["top"]]} for step in case["steps"]]}
    for prompt, case in zip(PROMPTS, llama_cpp_steps(model, texts, python, add_bos=False))
]
out = os.path.join(ROOT, "crates/llmtool-local/tests/fixtures/smollm2-logits.json")
with open(out, "w") as f:
    json.dump({"model": os.path.basename(model), "reference": "llama.cpp via llama-cpp-python 0.3.36 (portable AVX2 build, 2 threads)", "cases": cases}, f, indent=1, ensure_ascii=False)
    f.write("\n")
print(f"wrote {out}")
