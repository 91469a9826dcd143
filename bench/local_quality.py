#!/usr/bin/env python3
"""Answer quality of the catalog's local models on a fixed set of questions with known answers.

usage: bench/local_quality.py [MODEL ...]   (default: every model of `llmtool model catalog`)

Each question runs through `llmtool run` (target/release/llmtool) as a one-variable tool, on
the local model, greedy (temperature 0), at most 48 tokens; an answer counts as right when it
contains one of the accepted forms (case-insensitive). Prints a Markdown table for
docs/local-model.md. The models must be installed (`llmtool model pull NAME`).
"""
import json, os, re, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLMTOOL = os.path.join(ROOT, "target", "release", "llmtool")

# (question, accepted answers as regular expressions)
QUESTIONS = [
    ("What is the capital of France?", [r"\bparis\b"]),
    ("What is 12 times 12?", [r"\b144\b"]),
    ("Which planet is known as the Red Planet?", [r"\bmars\b"]),
    ("Who wrote the play Romeo and Juliet?", [r"shakespeare"]),
    ("What is the chemical symbol for gold?", [r"\bau\b"]),
    ("How many days are there in a leap year?", [r"\b366\b"]),
    ("What is the largest ocean on Earth?", [r"pacific"]),
    ("At sea level, at what temperature in degrees Celsius does water boil?", [r"\b100\b"]),
    ("Which gas do plants take in from the air to make their food?", [r"carbon dioxide", r"\bco2\b", r"co₂"]),
    ("In Python, which keyword starts the definition of a function?", [r"\bdef\b"]),
    ("What is the square root of 81?", [r"\b9\b", r"\bnine\b"]),
    ("Why is the sky blue? Name the scattering effect.", [r"rayleigh"]),
]

TOOL = {
    "version": "2.1",
    "model_prompt": "Answer in one short sentence: {{question}}",
    "metadata": {
        "prompt_name": "Quiz",
        "description": "Answers a question briefly.",
        "variables": [{"name": "question", "type": "text", "description": "The question."}],
        "expected_output": {"type": "text"},
    },
}


def catalog():
    out = subprocess.run([LLMTOOL, "model", "catalog"], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in out.splitlines() if "not installed" not in line]


def main():
    models = sys.argv[1:] or catalog()
    with tempfile.TemporaryDirectory() as work:
        tool = os.path.join(work, "quiz.json")
        json.dump(TOOL, open(tool, "w"))
        # Runs are logged in the temporary folder; the models stay where they are installed.
        models = os.environ.get("LLMTOOL_MODELS_DIR") or os.path.join(
            os.environ.get("LLMTOOL_DATA_DIR")
            or os.path.join(os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share"), "llmtool"),
            "models")
        env = {**os.environ, "LLMTOOL_DATA_DIR": os.path.join(work, "data"), "LLMTOOL_MODELS_DIR": models}
        rows = []
        for model in models:
            right, answers = 0, []
            for question, accepted in QUESTIONS:
                result = subprocess.run(
                    [LLMTOOL, "run", tool, "--var", f"question={question}", "--model", f"local:{model}",
                     "--temperature", "0", "--max-tokens", "48"],
                    capture_output=True, text=True, env=env, timeout=600)
                if result.returncode != 0:
                    sys.exit(f"{model}: llmtool run failed ({result.returncode}): {result.stderr.strip()[-500:]}")
                answer = result.stdout.strip()
                ok = any(re.search(a, answer, re.I) for a in accepted)
                right += ok
                answers.append((question, ok, answer.replace("\n", " ")[:100]))
            rows.append((model, right, answers))
            print(f"{model}: {right}/{len(QUESTIONS)}", file=sys.stderr)
    print("| question | " + " | ".join(m for m, _, _ in rows) + " |")
    print("|---|" + "---|" * len(rows))
    for i, (question, _) in enumerate(QUESTIONS):
        print(f"| {question} | " + " | ".join("yes" if r[2][i][1] else "no" for r in rows) + " |")
    print("| **right** | " + " | ".join(f"**{r[1]}/{len(QUESTIONS)}**" for r in rows) + " |")
    for model, _, answers in rows:
        print(f"\n{model}:", file=sys.stderr)
        for question, ok, answer in answers:
            print(f"  [{'ok' if ok else '--'}] {question} -> {answer}", file=sys.stderr)


if __name__ == "__main__":
    main()
