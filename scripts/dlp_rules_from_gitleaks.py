#!/usr/bin/env python3
"""Writes llmtool-dlp's secret rules from a gitleaks rule file.

    python3 scripts/dlp_rules_from_gitleaks.py GITLEAKS_TOML VERSION > crates/llmtool-dlp/rules/secrets.toml

GITLEAKS_TOML is gitleaks' `config/gitleaks.toml`; VERSION names the release or commit it came
from. The output keeps what llmtool-dlp uses of each rule (its id, regex, keywords, entropy,
secret group, and allowlists of regexes and stopwords) and drops what only applies to files in
a repository (path rules and path allowlists) and the rules' prose. gitleaks is MIT-licensed;
the licence goes at the top of the output.
"""

import re
import sys
import tomllib

LICENCE = """MIT License

Copyright (c) 2019 Zachary Rice

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE."""


def rust_regex(pattern):
    """`pattern` in Rust's regex syntax. Go reads a `{` that starts no repetition (`{\\d+}`
    in `${\\d+}`) as itself; Rust wants it escaped. Everything else the rules use means the
    same in both."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
        elif c == "]" and in_class:
            in_class = False
        elif c == "{" and not in_class and not re.match(r"\{\d+(,\d*)?\}", pattern[i:]):
            c = "\\{"
        out.append(c)
        i += 1
    return "".join(out)


def literal(text):
    """A TOML literal string (no escapes), multi-line form when it needs one."""
    if "'" not in text and "\n" not in text:
        return f"'{text}'"
    if "'''" in text:
        raise SystemExit(f"cannot write {text!r} as a TOML literal string")
    return f"'''{text}'''"


def strings(values):
    return "[" + ", ".join(literal(v) for v in values) + "]"


def allowlists(lists):
    """The allowlists a text scanner can apply: regexes (on the secret, the match or the
    line) and stopwords. Path allowlists and conditions on them do not apply to text."""
    kept = []
    for entry in lists:
        if "paths" in entry and not entry.get("regexes") and not entry.get("stopwords"):
            continue
        item = {}
        if entry.get("regexes"):
            item["regexes"] = [rust_regex(r) for r in entry["regexes"]]
            item["target"] = entry.get("regexTarget", "secret")
        if entry.get("stopwords"):
            item["stopwords"] = entry["stopwords"]
        if item:
            kept.append(item)
    return kept


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    with open(sys.argv[1], "rb") as file:
        config = tomllib.load(file)
    out = [
        "# Secret rules of llmtool-dlp, derived by scripts/dlp_rules_from_gitleaks.py from",
        f"# gitleaks' config/gitleaks.toml ({sys.argv[2]}). Do not edit by hand: run the script.",
        "# gitleaks' licence:",
        "#",
    ]
    out += [f"# {line}".rstrip() for line in LICENCE.splitlines()]
    out.append("")
    glob = config.get("allowlist", {})
    out.append("[allow]")
    out.append(f"regexes = {strings([rust_regex(r) for r in glob.get('regexes', [])])}")
    out.append(f"stopwords = {strings(glob.get('stopwords', []))}")
    kept = 0
    for rule in config["rules"]:
        if "regex" not in rule or "path" in rule:
            continue  # rules on file paths, not on text
        kept += 1
        out += ["", "[[rule]]", f"id = {literal(rule['id'])}", f"regex = {literal(rust_regex(rule['regex']))}"]
        out.append(f"keywords = {strings(rule.get('keywords', []))}")
        if "entropy" in rule:
            out.append(f"entropy = {rule['entropy']}")
        if "secretGroup" in rule:
            out.append(f"secret_group = {rule['secretGroup']}")
        for entry in allowlists(rule.get("allowlists", [])):
            out.append("[[rule.allow]]")
            if "regexes" in entry:
                out.append(f"target = {literal(entry['target'])}")
                out.append(f"regexes = {strings(entry['regexes'])}")
            if "stopwords" in entry:
                out.append(f"stopwords = {strings(entry['stopwords'])}")
    print("\n".join(out))
    print(f"kept {kept} of {len(config['rules'])} rules", file=sys.stderr)


if __name__ == "__main__":
    main()
