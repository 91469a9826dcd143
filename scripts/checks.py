"""What the test command's Python scripts share: a virtual environment of pinned packages,
installed once into an ignored folder, and checks that are logged and counted."""
import os, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The folder of the binaries the scripts run (llmtool, the test kit's mock servers): the test
# command's build (it sets LLMTOOL_BUILD_DIR), else the dev build.
BUILD = os.environ.get("LLMTOOL_BUILD_DIR") or os.path.join(ROOT, "target", "debug")
LLMTOOL = os.path.join(BUILD, "llmtool")


class Checks:
    """Logs each check as `[prefix] ok   name` or `[prefix] FAIL name: detail`, and keeps the
    names of those that failed."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.failures = []

    def log(self, message):
        print(f"[{self.prefix}] {message}", flush=True)

    def check(self, name, condition, detail=""):
        self.log(("ok   " if condition else "FAIL ") + name + (f": {detail}" if detail and not condition else ""))
        if not condition:
            self.failures.append(name)

    def finish(self):
        """Exits 1 when a check failed, after saying how many."""
        if self.failures:
            self.log(f"{len(self.failures)} check(s) failed")
            sys.exit(1)
        self.log("all checks passed")


def between(text, markers):
    """The part of `text` between the two marker lines, and where it starts and ends."""
    start = text.index(markers[0]) + len(markers[0]) + 1
    end = text.index(markers[1])
    return text[start:end], start, end


def doc_table_fresh(path, markers, table, what, log):
    """Whether the file at `path` holds `table` between `markers`; with LLMTOOL_BLESS=1 it is
    written there. `what` names the table in what is logged."""
    with open(path, encoding="utf-8") as file:
        text = file.read()
    current, start, end = between(text, markers)
    if current == table:
        return True
    shown = os.path.relpath(path, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if os.environ.get("LLMTOOL_BLESS") == "1":
        with open(path, "w", encoding="utf-8") as out:
            out.write(text[:start] + table + text[end:])
        log(f"{shown}: the {what} is written")
        return True
    log(f"{shown}'s {what} is stale (LLMTOOL_BLESS=1 writes it); the counts found:\n{table}")
    return False


def build_binaries():
    """The binaries the scripts run (llmtool and the test kit's mock servers, in BUILD), built as
    the tests' build builds them: with the tests' targets, so that features resolve as they do
    for `cargo nextest` (a `-p llmtool` or a `--bins` build resolves them differently, without
    the dev-dependencies' features, and compiles much of the workspace again). The test
    command builds them once before any script and sets LLMTOOL_BUILT=1, which skips this."""
    if os.environ.get("LLMTOOL_BUILT") == "1":
        return
    folder = os.path.basename(BUILD)
    profile = "dev" if folder == "debug" else folder
    subprocess.run(["cargo", "build", "-q", "--workspace", "--bins", "--tests", "--profile", profile],
                   cwd=ROOT, check=True)


def venv_python(folder, packages, probe, log):
    """The Python of a virtual environment in `folder` with `packages` installed; installed once,
    and kept while `probe` (Python code) runs in it without error.
    `log` says when it installs."""
    python = os.path.join(folder, "bin", "python")
    if os.path.exists(python) and subprocess.run([python, "-c", probe], capture_output=True).returncode == 0:
        return python
    log(f"installing {', '.join(packages)} (once)")
    subprocess.run([sys.executable, "-m", "venv", folder], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", *packages], check=True)
    return python
