#!/usr/bin/env python3
"""Writes the independent extractors' text of each real-world document fixture, which
`crates/llmtool-documents/tests/real_world.rs` measures llmtool's text against:
`pdftotext` (poppler-utils) for PDFs, `pandoc -t plain --wrap=none` for DOCX and ODT.

    python3 scripts/document_references.py

Needs poppler-utils and pandoc (Debian packages of those names). The texts go to
`references/FILE.txt` beside the fixtures, with the tools' versions in `references/VERSIONS`.
Documents an extractor cannot read (encrypted, scanned) get no reference.
"""
import os, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "crates", "llmtool-documents", "tests", "fixtures", "real-world")
OUT = os.path.join(FIXTURES, "references")


def reference(path, kind):
    if kind == "pdf":
        command = ["pdftotext", "-enc", "UTF-8", path, "-"]
    else:
        command = ["pandoc", "-t", "plain", "--wrap=none", path]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    return done.stdout if done.returncode == 0 and done.stdout.strip() else None


def main():
    os.makedirs(OUT, exist_ok=True)
    versions = [
        subprocess.run(["pdftotext", "-v"], capture_output=True, text=True).stderr.splitlines()[0],
        subprocess.run(["pandoc", "--version"], capture_output=True, text=True).stdout.splitlines()[0],
    ]
    with open(os.path.join(OUT, "VERSIONS"), "w", encoding="utf-8") as out:
        out.write("\n".join(versions) + "\n")
    for kind in ("pdf", "docx", "odt"):
        for name in sorted(os.listdir(os.path.join(FIXTURES, kind))):
            text = reference(os.path.join(FIXTURES, kind, name), kind)
            target = os.path.join(OUT, name + ".txt")
            if text is None:
                print(f"{name}: no text from the independent extractor")
                if os.path.exists(target):
                    os.remove(target)
                continue
            with open(target, "w", encoding="utf-8") as out:
                out.write(text)
            print(f"{name}: {len(text.split())} words")
    return 0


if __name__ == "__main__":
    sys.exit(main())
