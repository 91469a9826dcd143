#!/usr/bin/env python3
"""Write one valid tool with N variables, every one used in the prompt, deterministically.

usage: gen_wide_tool.py N OUT

A third of the variables are text with a default, a third single-select, a third multi-select
(three allowed values each). The prompt names each variable once, in order. Used by
bench/scaling.sh to show that check and render grow linearly with the number of variables.
"""
import json, sys

n, out = int(sys.argv[1]), sys.argv[2]
variables = []
for i in range(n):
    if i % 3 == 0:
        variables.append({"name": f"v{i}", "type": "text", "description": f"variable {i}", "default": f"value {i}"})
    elif i % 3 == 1:
        variables.append({"name": f"v{i}", "type": "single-select", "description": "one of three", "default": "a", "allowed_values": ["a", "b", "c"]})
    else:
        variables.append({"name": f"v{i}", "type": "multi-select", "description": "some of three", "default": ["a"], "allowed_values": ["a", "b", "c"]})
tool = {
    "version": "2.1",
    "model_prompt": " ".join("{{v%d}}" % i for i in range(n)),
    "metadata": {"prompt_name": "Wide", "description": f"{n} variables", "variables": variables},
}
with open(out, "w", encoding="utf-8") as f:
    json.dump(tool, f, separators=(",", ":"))
