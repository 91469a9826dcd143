#!/usr/bin/env python3
"""The peer of `llmtool mcp --http` in the MCP benchmark: the official Python SDK's `MCPServer`
serving the example tools as prompts, rendered the way llmtool renders them (each `{{name}}`
replaced by the value, a list joined with ", ", defaults filled in).

`MCPServer` takes a prompt's arguments from a Python function's signature, so a tool whose
variable names are not Python identifiers (`aspect ratio`) is left out; the benchmarked prompt,
`teach_me_anything`, is served by both servers.

Usage: python_server.py PORT TOOLS_FOLDER
"""
import inspect, json, os, re, sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.prompts.base import Prompt


def slug(text):
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def render(template, variables, values):
    out = template
    for variable in variables:
        value = values.get(variable["name"], variable.get("default", ""))
        if isinstance(value, list):
            value = ", ".join(value)
        out = out.replace("{{" + variable["name"] + "}}", value)
    return out


def prompt_for(tool):
    metadata = tool["metadata"]
    variables = metadata.get("variables", [])
    if not all(v["name"].isidentifier() for v in variables):
        return None
    template = tool["model_prompt"]

    def fn(**values):
        return render(template, variables, values)

    parameters = [
        inspect.Parameter(v["name"], inspect.Parameter.KEYWORD_ONLY, annotation=str,
                          default=inspect.Parameter.empty if "default" not in v else ", ".join(v["default"]) if isinstance(v["default"], list) else v["default"])
        for v in variables
    ]
    fn.__signature__ = inspect.Signature(parameters, return_annotation=str)
    fn.__annotations__ = {**{v["name"]: str for v in variables}, "return": str}
    fn.__name__ = slug(metadata["prompt_name"])
    return Prompt.from_function(fn, name=fn.__name__, title=metadata["prompt_name"], description=metadata.get("description"))


def main():
    port, folder = int(sys.argv[1]), sys.argv[2]
    server = MCPServer("python-bench", log_level="WARNING")
    for file in sorted(os.listdir(folder)):
        # A `.tests.json` beside a tool holds its test cases, not a tool: llmtool skips it too.
        if file.endswith(".json") and not file.endswith(".tests.json"):
            prompt = prompt_for(json.load(open(os.path.join(folder, file), encoding="utf-8")))
            if prompt:
                server.add_prompt(prompt)
    server.run(transport="streamable-http", host="127.0.0.1", port=port)


if __name__ == "__main__":
    main()
