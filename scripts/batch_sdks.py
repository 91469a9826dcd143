#!/usr/bin/env python3
"""The testkit's mock batch engines, driven by the providers' own SDKs from PyPI: the OpenAI,
Anthropic and Google GenAI Python libraries each submit a batch to `mock-batches`, follow it to
its end and read its answers back with their own typed models. This checks the mocks (which
llmtool's batch clients are tested against) by programs written by the providers, not by us.

Installs the SDKs once into target/batch-sdks/ (idempotently). Exits 1 if a check fails.
"""
import os, subprocess, sys

from checks import BUILD, venv_python, build_binaries

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, "target", "batch-sdks")
SDKS = ["openai==3.51.0", "anthropic==2.10.0", "google-genai==3.3.0"]
PROBE = "import openai, anthropic, google.genai"
MOCK = os.path.join(BUILD, "mock-batches")


def log(message):
    print(f"[batch-sdks] {message}", flush=True)


def python():
    return venv_python(VENV, SDKS, PROBE, log)


# Each SDK's part runs in the venv, given the mock's URL; it prints what it checked.
CHECKS = r'''
import io, json, sys, time
url = sys.argv[1]
failures = []

def check(name, condition, detail=""):
    print(("ok   " if condition else "FAIL ") + name + (f": {detail}" if detail and not condition else ""))
    if not condition:
        failures.append(name)

def wait(get, done, polls=20):
    for _ in range(polls):
        value = get()
        if done(value):
            return value
    raise SystemExit("never ended")

# OpenAI: a JSON Lines file uploaded, a batch made of it, its output file read.
import openai
client = openai.OpenAI(api_key="sk-mock", base_url=f"{url}/v1", max_retries=0)
lines = "\n".join(json.dumps({"custom_id": cid, "method": "POST", "url": "/v1/chat/completions",
    "body": {"model": "gpt-mock", "messages": [{"role": "user", "content": text}]}})
    for cid, text in [("a", "Say <<yes>>"), ("b", "please FAIL")])
uploaded = client.files.create(file=("in.jsonl", io.BytesIO(lines.encode())), purpose="batch")
check("openai: the file is a FileObject", uploaded.id.startswith("file-") and uploaded.purpose == "batch")
batch = client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
    completion_window="24h", metadata={"from": "sdk"})
check("openai: the batch is validating", batch.status == "validating", batch.status)
done = wait(lambda: client.batches.retrieve(batch.id), lambda b: b.status in ("completed", "failed", "expired", "cancelled"))
check("openai: the batch completes", done.status == "completed", done.status)
check("openai: its counts", done.request_counts.total == 2 and done.request_counts.failed == 1, str(done.request_counts))
output = [json.loads(l) for l in client.files.content(done.output_file_id).text.splitlines()]
errors = [json.loads(l) for l in client.files.content(done.error_file_id).text.splitlines()]
check("openai: the answer by custom_id", output[0]["custom_id"] == "a"
      and output[0]["response"]["body"]["choices"][0]["message"]["content"] == "yes", str(output))
parsed = openai.types.chat.ChatCompletion.model_validate(output[0]["response"]["body"])
check("openai: the answer is a ChatCompletion", parsed.usage.prompt_tokens == 1000)
check("openai: the error by custom_id", errors[0]["custom_id"] == "b" and errors[0]["response"]["status_code"] == 400)
other = client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h")
check("openai: cancelling", client.batches.cancel(other.id).status == "cancelling")

# Anthropic: the requests posted at once, the results streamed as typed lines.
import anthropic
client = anthropic.Anthropic(api_key="sk-ant-mock", base_url=url, max_retries=0)
batch = client.messages.batches.create(requests=[
    {"custom_id": "a", "params": {"model": "claude-mock", "max_tokens": 64, "messages": [{"role": "user", "content": "Say <<yes>>"}]}},
    {"custom_id": "b", "params": {"model": "claude-mock", "max_tokens": 64, "messages": [{"role": "user", "content": "please FAIL"}]}},
])
check("anthropic: the batch is in progress", batch.processing_status == "in_progress", batch.processing_status)
done = wait(lambda: client.messages.batches.retrieve(batch.id), lambda b: b.processing_status == "ended")
check("anthropic: its counts", done.request_counts.succeeded == 1 and done.request_counts.errored == 1, str(done.request_counts))
results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
check("anthropic: the answer is a Message", results["a"].type == "succeeded" and results["a"].message.content[0].text == "yes", str(results["a"]))
check("anthropic: the error", results["b"].type == "errored" and results["b"].error.error.type == "invalid_request_error", str(results["b"]))
try:
    client.messages.batches.create(requests=[{"custom_id": "x" * 65, "params": {"model": "m", "max_tokens": 1, "messages": []}}])
    check("anthropic: a custom_id over 64 characters is refused", False)
except anthropic.BadRequestError as error:
    check("anthropic: a custom_id over 64 characters is refused", "custom_id" in str(error))
other = client.messages.batches.create(requests=[{"custom_id": "c", "params": {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}}])
check("anthropic: cancelling", client.messages.batches.cancel(other.id).processing_status == "canceling")

# Google GenAI: inline requests, the batch job followed, the answers inline.
from google import genai
from google.genai import types
# The API version llmtool speaks (the SDK's default may be newer).
client = genai.Client(api_key="mock-key", http_options=types.HttpOptions(base_url=url, api_version="v1beta"))
job = client.batches.create(model="gemini-mock", src=[
    {"contents": [{"parts": [{"text": "Say <<yes>>"}], "role": "user"}], "metadata": {"key": "a"}},
    {"contents": [{"parts": [{"text": "please FAIL"}], "role": "user"}], "metadata": {"key": "b"}},
], config={"display_name": "sdk-check"})
check("genai: the job is pending", str(job.state).endswith("PENDING"), str(job.state))
done = wait(lambda: client.batches.get(name=job.name), lambda j: j.done if j.done is not None else str(j.state).endswith(("SUCCEEDED", "FAILED", "CANCELLED", "EXPIRED")))
check("genai: the job succeeds", str(done.state).endswith("SUCCEEDED"), str(done.state))
answers = done.dest.inlined_responses if done.dest else None
check("genai: the answers inline, in order", answers is not None and len(answers) == 2, str(done.dest))
if answers:
    check("genai: the answer is a GenerateContentResponse", answers[0].response.text == "yes", str(answers[0]))
    check("genai: the error", answers[1].error is not None and answers[1].response is None, str(answers[1]))
    check("genai: the metadata comes back", (answers[0].metadata or {}).get("key") == "a", str(answers[0].metadata))
other = client.batches.create(model="gemini-mock", src=[{"contents": [{"parts": [{"text": "hi"}], "role": "user"}]}], config={"display_name": "x"})
client.batches.cancel(name=other.name)
check("genai: cancelling", str(client.batches.get(name=other.name).state).endswith("CANCELLED"))

sys.exit(1 if failures else 0)
'''


def main():
    binary = python()
    # Built by the test command already; built here when the script runs alone.
    build_binaries()
    mock = subprocess.Popen([MOCK, "1"], stdout=subprocess.PIPE, text=True)
    try:
        url = mock.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            sys.exit(f"the mock did not start: {url!r}")
        result = subprocess.run([binary, "-c", CHECKS, url], timeout=300)
        if result.returncode != 0:
            log("the SDKs disagree with the mock")
            sys.exit(1)
        log("the OpenAI, Anthropic and Google GenAI SDKs agree with the mock")
    finally:
        mock.kill()
        mock.wait()


if __name__ == "__main__":
    main()
