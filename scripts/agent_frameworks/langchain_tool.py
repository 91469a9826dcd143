# An exported tool in LangChain: its schema from `llmtool export --to openai --with-runner`,
# run by `llmtool call` when the model calls it. (docs/convert.md shows these lines.)
import json, subprocess, sys
from langchain_core.tools import StructuredTool

exported = json.load(open(sys.argv[1]))      # llmtool export TOOL --to openai --with-runner
function, command = exported["tool"]["function"], exported["run"]["command"]

def run(**arguments):
    done = subprocess.run(command, input=json.dumps(arguments), capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else f"Error: {done.stderr.strip()}"

tool = StructuredTool.from_function(
    func=run, name=function["name"], description=function["description"],
    args_schema=function["parameters"])

print(json.dumps({"answer": tool.invoke(json.loads(sys.argv[2])).strip()}))
