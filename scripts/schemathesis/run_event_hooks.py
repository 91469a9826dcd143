"""schemathesis hooks for the run-events pass of scripts/registry_fuzz.py: the generated runs
go to a tool that exists, on the mock model, with a value schemathesis draws, so that each is a
real run whose Server-Sent Events schemathesis checks against the OpenAPI document (each
event's data against its `contentSchema`). A follow-up goes to a conversation one of those
runs started.

The pass sets LLMTOOL_FUZZ_URL, LLMTOOL_FUZZ_TOKEN, LLMTOOL_FUZZ_SLUG and LLMTOOL_FUZZ_MODEL.
"""
import json
import os
import urllib.request

import schemathesis

URL = os.environ.get("LLMTOOL_FUZZ_URL", "")
TOKEN = os.environ.get("LLMTOOL_FUZZ_TOKEN", "")
SLUG = os.environ.get("LLMTOOL_FUZZ_SLUG", "")
MODEL = os.environ.get("LLMTOOL_FUZZ_MODEL", "")
_conversation = []


def conversation():
    """A conversation to follow up: started once, by a run of the tool."""
    if not _conversation:
        body = json.dumps({"values": {"topic": "tides"}, "model": MODEL}).encode()
        request = urllib.request.Request(f"{URL}/api/v1/tools/{SLUG}/run", data=body, method="POST", headers={
            "Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            for line in response.read().decode().splitlines():
                if line.startswith("data: ") and '"conversation"' in line:
                    _conversation.append(json.loads(line[6:])["conversation"])
                    break
    return _conversation[0]


@schemathesis.hook
def map_case(ctx, case):
    path = case.operation.path
    body = case.body if isinstance(case.body, dict) else {}
    if path.endswith("/tools/{slug}/run"):
        values = body.get("values")
        topic = values.get("topic") if isinstance(values, dict) else None
        case.path_parameters = {"slug": SLUG}
        case.query = {}
        case.body = {"values": {"topic": topic if isinstance(topic, str) and topic else "the sea"},
                     "model": MODEL}
    elif path.endswith("/conversations/{id}/messages"):
        text = body.get("text")
        case.path_parameters = {"id": conversation()}
        case.body = {"text": text if isinstance(text, str) and text.strip() else "And then?"}
    return case
