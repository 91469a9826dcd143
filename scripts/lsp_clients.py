#!/usr/bin/env python3
"""`llmtool lsp` driven by real LSP clients.

1. pytest-lsp (PyPI, on pygls) runs crates/llmtool-lsp/tests/client/ with the capabilities of
   VS Code and of Neovim: diagnostics against `llmtool check`, incremental changes, quick fixes
   and fix-all against `fmt --fix`, formatting, definition, references, rename, outline, hover.
2. Neovim (Debian's `neovim` package, headless, its built-in client) opens a broken tool file,
   receives its diagnostics, applies the fix-all code action and saves; the saved file must
   hold the fixes and check clean of what they fixed.
3. Emacs (Debian's emacs-nox, batch mode) opens a tool file with each of its two clients,
   eglot (elpa-eglot) and lsp-mode (elpa-lsp-mode): gets its diagnostics in flymake, formats
   the buffer and renames a variable through the server; lsp-mode also shows a hover.
4. The VS Code extension in editors/vscode/ is bundled (esbuild) and packaged with @vscode/vsce
   from npm; the package must hold the bundle, and the bundle must load and export `activate`.

Installs pytest-lsp once into target/lsp-venv/ (idempotently). Exits 1 if a check fails.
"""
import glob, json, os, shutil, subprocess, tempfile

from checks import LLMTOOL, Checks, venv_python, build_binaries

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, "target", "lsp-venv")
PACKAGES = ["pytest-lsp==1.0.1", "pygls==2.1.1"]
TESTS = os.path.join(ROOT, "crates", "llmtool-lsp", "tests")

CHECKS = Checks("lsp-clients")
log, check = CHECKS.log, CHECKS.check


def python():
    return venv_python(VENV, PACKAGES, "import pytest_lsp", log)


def pytest_lsp_suite():
    result = subprocess.run(
        [python(), "-m", "pytest", os.path.join(TESTS, "client"), "-q", "-p", "no:cacheprovider"],
        cwd=ROOT, env={**os.environ, "LLMTOOL": LLMTOOL}, timeout=600,
    )
    check("pytest-lsp: every feature, with VS Code's and Neovim's capabilities", result.returncode == 0)


def neovim_fix_all():
    nvim = shutil.which("nvim")
    if nvim is None:
        check("neovim is installed (the test command installs Debian's neovim)", False)
        return
    broken = (
        '{\n  "model_prompt": "Summarise {{topic}}.",\n  "metadata": {\n'
        '    "prompt_name": "Summary",\n    "description": "Summarises a topic.",\n'
        '    "variables": [\n      {"name": "topic", "type": "texto", "description": "What to summarise.",},\n'
        "    ]\n  }\n}\n"
    )
    with tempfile.TemporaryDirectory() as folder:
        tool = os.path.join(folder, "summary.llmtool.json")
        result_file = os.path.join(folder, "result.txt")
        with open(tool, "w") as file:
            file.write(broken)
        env = {**os.environ, "LLMTOOL": LLMTOOL, "TOOL_FILE": tool, "RESULT": result_file,
               "XDG_CONFIG_HOME": folder, "XDG_DATA_HOME": folder, "XDG_STATE_HOME": folder}
        script = os.path.join(TESTS, "neovim", "fix_all.lua")
        run = subprocess.run([nvim, "--headless", "--clean", "-c", f"luafile {script}"],
                             cwd=folder, env=env, capture_output=True, text=True, timeout=120)
        lines = open(result_file).read().splitlines() if os.path.exists(result_file) else []
        log("neovim said: " + " | ".join(lines) + (f" (stderr: {run.stderr.strip()})" if run.stderr.strip() else ""))
        before = next((l for l in lines if l.startswith("before ")), "")
        after = next((l for l in lines if l.startswith("after ")), "")
        check("neovim receives the diagnostics of `check`", "LT205" in before and "LT001" in before, before)
        check("neovim gets the fix-all code action", any(l.startswith("action ") for l in lines), str(lines))
        check("after the fix, the server's new diagnostics lack what was fixed",
              after != "" and "LT205" not in after and "LT001" not in after and "not updated" not in after, after)
        saved = open(tool).read()
        check("the saved file holds the fixes", '"type": "text"' in saved and '",}' not in saved, saved)
        checked = subprocess.run([LLMTOOL, "check", tool, "--format", "json"], capture_output=True, text=True)
        left = {d["code"] for d in json.loads(checked.stdout or "[]")}
        check("`llmtool check` agrees the fixed problems are gone", not left & {"LT205", "LT001"}, str(left))


def emacs_client(client, package):
    """Emacs with `client` (eglot or lsp-mode, from Debian's elpa-`package`) edits a tool file."""
    emacs = shutil.which("emacs")
    if emacs is None or not glob.glob(f"/usr/share/emacs/site-lisp/elpa/{package}-*"):
        check(f"emacs and {client} are installed (the test command installs emacs-nox and elpa-{package})", False)
        return
    with open(os.path.join(ROOT, "examples", "teach-me-anything.json")) as file:
        canonical = file.read()
    # Not canonical (spaces around a value), and one misspelt placeholder to be reported.
    edited = canonical.replace('"version": "2.1",', '"version":   "2.1" ,').replace(
        "Teach me about {{topic}}.", "Teach me about {{topic}} and {{topik}}.")
    with tempfile.TemporaryDirectory() as folder:
        tool = os.path.join(folder, "teach.llmtool.json")
        result_file = os.path.join(folder, "result.txt")
        with open(tool, "w") as file:
            file.write(edited)
        env = {**os.environ, "LLMTOOL": LLMTOOL, "TOOL_FILE": tool, "RESULT": result_file, "HOME": folder}
        script = os.path.join(TESTS, "emacs", f"{client}.el")
        run = subprocess.run([emacs, "--batch", "-Q", "-l", script], cwd=folder, env=env,
                             capture_output=True, text=True, timeout=120)
        lines = open(result_file).read().splitlines() if os.path.exists(result_file) else []
        log(f"emacs ({client}) said: " + " | ".join(lines) + ("" if lines else f" (stderr: {run.stderr[-500:]})"))
        check(f"{client} shows the server's diagnostics in flymake", "diagnostics 1" in lines, str(lines))
        if client == "lsp-mode":
            check("lsp-mode shows the hover of a placeholder (its variable's type and allowed values)",
                  any(line.startswith("hover level: single-select") and "Allowed: child" in line
                      for line in lines), str(lines))
        saved = open(tool).read()
        expected = canonical.replace("Teach me about {{topic}}.", "Teach me about {{topic}} and {{topik}}.")
        check(f"{client} formats the buffer to fmt's canonical text",
              "formatted" in lines and saved.replace("expertise", "level") == expected, saved[:300])
        check(f"{client} renames the variable and its placeholder",
              "renamed" in lines and saved.count("expertise") == 2 and "{{expertise}}" in saved, saved[:300])


def vscode_extension():
    folder = os.path.join(ROOT, "editors", "vscode")
    lock = os.path.join(folder, "package-lock.json")
    stamp = os.path.join(folder, "node_modules", ".installed-lock.json")
    if not (os.path.exists(stamp) and open(stamp).read() == open(lock).read()):
        log("installing the extension's npm packages (once per lock file)")
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=folder, check=True)
        shutil.copyfile(lock, stamp)
    subprocess.run(["node", "build.mjs"], cwd=folder, check=True)
    package = subprocess.run(
        ["npx", "--no-install", "vsce", "package", "--no-dependencies", "--skip-license", "--out", "llmtool.vsix"],
        cwd=folder, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300,
    )
    check("vsce packages the extension", package.returncode == 0, package.stdout + package.stderr)
    listing = subprocess.run(["python3", "-m", "zipfile", "-l", os.path.join(folder, "llmtool.vsix")],
                             capture_output=True, text=True).stdout
    check("the package holds the bundle and the manifest",
          "extension/extension.js" in listing and "extension/package.json" in listing, listing)
    # The bundle must load on its own: `vscode` is the only module it may leave to the editor,
    # stood in for here by an object whose every member is an empty class.
    probe = (
        "const Module = require('module'); const load = Module._load;"
        "const vscode = new Proxy({}, { get: () => class {} });"
        "Module._load = function (name, ...rest) { return name === 'vscode' ? vscode : load.call(this, name, ...rest); };"
        "const extension = require('./extension.js');"
        "if (typeof extension.activate !== 'function') process.exit(1);"
    )
    with tempfile.TemporaryDirectory() as alone:
        shutil.copy(os.path.join(folder, "extension.js"), alone)
        loaded = subprocess.run(["node", "-e", probe], cwd=alone, capture_output=True, text=True)
    check("the bundle loads without node_modules and exports activate", loaded.returncode == 0, loaded.stderr[-500:])


def main():
    build_binaries()
    pytest_lsp_suite()
    neovim_fix_all()
    emacs_client("eglot", "eglot")
    emacs_client("lsp-mode", "lsp-mode")
    vscode_extension()
    CHECKS.finish()


if __name__ == "__main__":
    main()
