#!/usr/bin/env python3
"""Refreshes llmtool's price table (crates/llmtool-providers/data/prices.json) from the price file
LiteLLM publishes: `model_prices_and_context_window_backup.json`, inside the `litellm-core`
wheel on PyPI (MIT licence). Downloads the wheel with pip (no install), keeps the models that
answer prompts (modes chat, completion and responses) that have an input and an output price,
and writes their prices per token class (and their longest answer), with the source's version
and today's date.

    python3 scripts/refresh_prices.py            # the newest litellm-core
    python3 scripts/refresh_prices.py 1.106.4    # a given version
"""
import datetime, glob, json, os, subprocess, sys, tempfile, zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "crates", "llmtool-providers", "data", "prices.json")
PACKAGE = "litellm-core"
INNER = "litellm/model_prices_and_context_window_backup.json"
MODES = {"chat", "completion", "responses"}
# Our token classes, and LiteLLM's name for the price of each (US dollars per token).
CLASSES = {
    "input": "input_cost_per_token",
    "cached_input": "cache_read_input_token_cost",
    "cache_write": "cache_creation_input_token_cost",
    "output": "output_cost_per_token",
    "reasoning": "output_cost_per_reasoning_token",
    "batch_input": "input_cost_per_token_batches",
    "batch_output": "output_cost_per_token_batches",
}


def download(version, into):
    spec = f"{PACKAGE}=={version}" if version else PACKAGE
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", spec, "-d", into], check=True)
    wheel = glob.glob(os.path.join(into, "*.whl"))[0]
    found_version = os.path.basename(wheel).split("-")[1]
    with zipfile.ZipFile(wheel) as archive:
        return found_version, json.loads(archive.read(INNER))


def entries(source):
    kept = {}
    for key, entry in sorted(source.items()):
        if not isinstance(entry, dict) or entry.get("mode") not in MODES:
            continue
        prices = {ours: entry[theirs] for ours, theirs in CLASSES.items()
                  if isinstance(entry.get(theirs), (int, float)) and not isinstance(entry.get(theirs), bool)}
        if "input" in prices and "output" in prices:
            kept[key] = {"provider": entry.get("litellm_provider", ""), **prices}
            # The longest answer, for the worst-case cost of a request with no `max_tokens`.
            longest = entry.get("max_output_tokens") or entry.get("max_tokens")
            if isinstance(longest, int) and longest > 0:
                kept[key]["max_output"] = longest
    return kept


def main():
    version = sys.argv[1] if len(sys.argv) > 1 else None
    with tempfile.TemporaryDirectory() as work:
        version, source = download(version, work)
    models = entries(source)
    lines = [
        "{",
        '  "source": ' + json.dumps({
            "package": PACKAGE, "version": version, "file": INNER, "licence": "MIT",
            "refreshed": datetime.date.today().isoformat(),
        }) + ",",
        '  "unit": "US dollars per token",',
        '  "models": {',
    ]
    # One model per line, so that a refresh reads as a diff of the prices that changed.
    body = [f"    {json.dumps(key)}: {json.dumps(value)}" for key, value in models.items()]
    lines.append(",\n".join(body))
    lines += ["  }", "}", ""]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as out:
        out.write("\n".join(lines))
    print(f"{OUT}: {len(models)} models from {PACKAGE} {version}")


if __name__ == "__main__":
    main()
