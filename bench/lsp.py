#!/usr/bin/env python3
"""How soon `llmtool lsp` publishes diagnostics after a change to a large tool file.

usage: bench/lsp.py [MEGABYTES=1] [CHANGES=50]

A scripted client (plain JSON-RPC over the server's pipes, so the client adds next to nothing)
starts the release build of `llmtool lsp`, opens a tool file of about MEGABYTES (a long prompt
with a placeholder every few words, and 200 variables), then sends CHANGES keystrokes one at a
time, each an incremental `didChange` that types one character into the prompt. For each, it
times from writing the change to reading the `publishDiagnostics` for that version. Prints
the median, the 95th percentile and the worst.
"""
import json, os, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mock_server import ROOT  # noqa: E402

LLMTOOL = os.path.join(ROOT, "target", "release", "llmtool")


def tool_text(megabytes):
    variables = [{"name": f"field_{i}", "type": "text", "description": f"Field {i}.", "default": f"value {i}"}
                 for i in range(200)]
    words, size, i = [], 0, 0
    while size < megabytes * 1_000_000:
        word = f"{{{{field_{i % 200}}}}}" if i % 7 == 0 else f"word{i % 97}"
        words.append(word)
        size += len(word) + 1
        i += 1
    tool = {"model_prompt": " ".join(words),
            "metadata": {"prompt_name": "Large", "description": "A large tool file for the benchmark.",
                         "variables": variables}}
    return json.dumps(tool, indent=2)


class Client:
    def __init__(self):
        self.server = subprocess.Popen([LLMTOOL, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 0

    def send(self, message):
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.server.stdin.flush()

    def read(self):
        length = 0
        while (line := self.server.stdout.readline().strip()):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.server.stdout.read(length))

    def request(self, method, params):
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while "id" not in (message := self.read()) or message.get("id") != self.next_id:
            pass
        return message

    def wait_for_diagnostics(self, version):
        while True:
            message = self.read()
            if message.get("method") == "textDocument/publishDiagnostics" and message["params"].get("version") == version:
                return message["params"]["diagnostics"]


def main():
    megabytes = float(sys.argv[1]) if len(sys.argv) > 1 else 1
    changes = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "llmtool"], cwd=ROOT, check=True)
    text = tool_text(megabytes)
    client = Client()
    client.request("initialize", {"processId": os.getpid(), "rootUri": None,
                                  "capabilities": {"general": {"positionEncodings": ["utf-8"]}}})
    client.send({"method": "initialized", "params": {}})
    uri = "file:///bench/large.llmtool.json"
    start = time.perf_counter()
    client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "json", "version": 1, "text": text}}})
    found = client.wait_for_diagnostics(1)
    opened = time.perf_counter() - start
    line = text.split("\n").index(next(l for l in text.split("\n") if '"model_prompt"' in l))
    timings = []
    for n in range(changes):
        at = {"line": line, "character": 20 + n}
        start = time.perf_counter()
        client.send({"method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": n + 2},
            "contentChanges": [{"range": {"start": at, "end": at}, "text": "x"}]}})
        client.wait_for_diagnostics(n + 2)
        timings.append((time.perf_counter() - start) * 1000)
    client.request("shutdown", None)
    client.send({"method": "exit"})
    client.server.wait(timeout=10)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    timings.sort()
    p95 = timings[min(len(timings) - 1, int(len(timings) * 0.95))]
    print(f"One run at {commit}: a {len(text.encode()) / 1e6:.2f} MB tool file, {len(found)} diagnostics, "
          f"opened and checked in {opened * 1000:.1f} ms")
    print(f"\n| {changes} keystrokes | median | 95th percentile | worst |")
    print("|---|---|---|---|")
    print(f"| change to diagnostics published | {statistics.median(timings):.1f} ms | {p95:.1f} ms | {timings[-1]:.1f} ms |")


if __name__ == "__main__":
    main()
