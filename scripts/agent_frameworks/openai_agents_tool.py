# An exported tool in the OpenAI Agents SDK: a FunctionTool whose schema comes from
# `llmtool export --to openai --strict-schema --with-runner` and whose invocation runs
# `llmtool call`. (docs/convert.md shows these lines.)
import asyncio, json, sys
from agents import FunctionTool

exported = json.load(open(sys.argv[1]))      # llmtool export TOOL --to openai --strict-schema --with-runner
function, command = exported["tool"]["function"], exported["run"]["command"]

async def run(_context, arguments: str) -> str:
    call = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await call.communicate(arguments.encode())
    return out.decode() if call.returncode == 0 else f"Error: {err.decode().strip()}"

tool = FunctionTool(name=function["name"], description=function["description"],
                    params_json_schema=function["parameters"], on_invoke_tool=run)

# As the SDK calls it: the model's arguments as a JSON string.
print(json.dumps({"answer": asyncio.run(tool.on_invoke_tool(None, sys.argv[2])).strip(),
                  "strict": tool.strict_json_schema}))
