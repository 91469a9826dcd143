"""What the test command's Python scripts share: a virtual environment of pinned packages,
installed once into an ignored folder, and checks that are logged and counted."""
import os, subprocess, sys


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
