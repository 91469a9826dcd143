#!/usr/bin/env python3
"""Refreshes llmtool's price table (crates/llmtool-providers/data/prices.json) from the price file
LiteLLM publishes: `model_prices_and_context_window_backup.json`, inside the `litellm-core`
wheel on PyPI (MIT licence). Downloads the wheel with pip (no install), keeps the models that
answer prompts (modes chat, completion and responses) that have an input and an output price,
and the image models (mode image_generation) that have an input price and a price of their
pictures (per picture token or per picture), and writes their prices per token class (and
their longest answer and longest prompt, in tokens), with the source's version and today's
date.

    python3 scripts/refresh_prices.py            # the newest litellm-core
    python3 scripts/refresh_prices.py 1.106.4    # a given version
    python3 scripts/refresh_prices.py --check    # exit 1 unless the snapshot is exactly what
                                                 # its recorded version gives (the test command)
"""
import datetime, glob, json, os, subprocess, sys, tempfile, zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "crates", "llmtool-providers", "data", "prices.json")
PACKAGE = "litellm-core"
INNER = "litellm/model_prices_and_context_window_backup.json"
MODES = {"chat", "completion", "responses"}
# Image models: their output tokens are their pictures' (GPT image models, Gemini's).
IMAGE_MODE = "image_generation"
# Our token classes, and LiteLLM's name for the price of each (US dollars per token).
CLASSES = {
    "input": "input_cost_per_token",
    "cached_input": "cache_read_input_token_cost",
    "cache_write": "cache_creation_input_token_cost",
    "output": "output_cost_per_token",
    "reasoning": "output_cost_per_reasoning_token",
    "batch_input": "input_cost_per_token_batches",
    "batch_output": "output_cost_per_token_batches",
    # An image model's picture tokens, and US dollars per picture (not per token).
    "image_output": "output_cost_per_image_token",
    "per_image": "output_cost_per_image",
}


# Where --check keeps the wheel it downloads, so that it is fetched once.
CACHE = os.path.join(ROOT, "target", "prices")


def download(version, into):
    spec = f"{PACKAGE}=={version}" if version else PACKAGE
    if not glob.glob(os.path.join(into, f"*{version}*.whl" if version else "*.whl")):
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", spec, "-d", into], check=True)
    wheel = sorted(glob.glob(os.path.join(into, f"*{version}*.whl" if version else "*.whl")))[-1]
    found_version = os.path.basename(wheel).split("-")[1]
    with zipfile.ZipFile(wheel) as archive:
        return found_version, json.loads(archive.read(INNER))


def entries(source):
    kept = {}
    for key, entry in sorted(source.items()):
        if not isinstance(entry, dict) or entry.get("mode") not in MODES | {IMAGE_MODE}:
            continue
        prices = {ours: entry[theirs] for ours, theirs in CLASSES.items()
                  if isinstance(entry.get(theirs), (int, float)) and not isinstance(entry.get(theirs), bool)}
        if entry.get("mode") == IMAGE_MODE:
            # An image model with no text price bills its output as its pictures' tokens
            # (or, counting none, by the picture).
            if "output" not in prices and ("image_output" in prices or "per_image" in prices):
                prices["output"] = prices.get("image_output", 0.0)
        else:
            prices.pop("image_output", None)
            prices.pop("per_image", None)
        if "input" in prices and "output" in prices:
            kept[key] = {"provider": entry.get("litellm_provider", ""), **prices}
            # The longest answer, for the worst-case cost of a request with no `max_tokens`.
            longest = entry.get("max_output_tokens") or entry.get("max_tokens")
            if isinstance(longest, int) and longest > 0:
                kept[key]["max_output"] = longest
            # The context window's input side: a prompt over it is not sent (`max_tokens` is
            # left alone here, since LiteLLM uses it for either side).
            window = entry.get("max_input_tokens")
            if isinstance(window, int) and not isinstance(window, bool) and window > 0:
                kept[key]["max_input"] = window
    return kept


def snapshot(version, source, refreshed):
    """The snapshot's text: its source, then one model per line, so that a refresh reads as a
    diff of the prices that changed."""
    models = entries(source)
    lines = [
        "{",
        '  "source": ' + json.dumps({
            "package": PACKAGE, "version": version, "file": INNER, "licence": "MIT",
            "refreshed": refreshed,
        }) + ",",
        '  "unit": "US dollars per token",',
        '  "models": {',
    ]
    body = [f"    {json.dumps(key)}: {json.dumps(value)}" for key, value in models.items()]
    lines.append(",\n".join(body))
    lines += ["  }", "}", ""]
    return "\n".join(lines), len(models)


def pinned_version():
    """The version of the source the snapshot records."""
    return json.load(open(OUT, encoding="utf-8"))["source"]["version"]


def fetch_pinned():
    """The pinned version's price file, its wheel downloaded once into CACHE."""
    os.makedirs(CACHE, exist_ok=True)
    return download(pinned_version(), CACHE)[1]


def check():
    """Whether the snapshot is what its recorded version of the source gives."""
    current = json.load(open(OUT, encoding="utf-8"))["source"]
    source = fetch_pinned()
    expected, count = snapshot(current["version"], source, current["refreshed"])
    if open(OUT, encoding="utf-8").read() != expected:
        print(f"{OUT} is not what {PACKAGE} {current['version']} gives: run scripts/refresh_prices.py {current['version']}")
        return 1
    print(f"{OUT}: {count} models, exactly as {PACKAGE} {current['version']} gives them")
    return 0


def main():
    if sys.argv[1:] == ["--check"]:
        sys.exit(check())
    version = sys.argv[1] if len(sys.argv) > 1 else None
    with tempfile.TemporaryDirectory() as work:
        version, source = download(version, work)
    text, count = snapshot(version, source, datetime.date.today().isoformat())
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as out:
        out.write(text)
    print(f"{OUT}: {count} models from {PACKAGE} {version}")


if __name__ == "__main__":
    main()
