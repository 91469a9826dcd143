#!/usr/bin/env python3
"""Runs a smart tool's `execute` in plain CPython, as the sandbox's guest does (the code
compiled from the tool file, called with the variables, the result printed): the peer that
`bench/smart.sh` times llmtool's sandbox against.

usage: smart_plain.py TOOL.json NAME=VALUE ...
"""
import json, sys

tool = json.load(open(sys.argv[1]))
code = tool.get("tool_code") or tool["metadata"]["tool_code"]
variables = dict(arg.split("=", 1) for arg in sys.argv[2:])
scope = {"__name__": "__tool__"}
exec(compile(code, "<tool_code>", "exec"), scope)
result = scope["execute"](variables)
print(result if isinstance(result, str) else json.dumps(result))
