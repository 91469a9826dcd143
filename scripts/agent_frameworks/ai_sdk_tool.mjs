// An exported tool in Vercel's AI SDK: `tool()` with the schema from `llmtool export --to
// openai --with-runner` and an `execute` that runs `llmtool call`. (docs/convert.md shows these
// lines.)
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { jsonSchema, tool } from "ai";

const exported = JSON.parse(readFileSync(process.argv[2], "utf8")); // llmtool export TOOL --to openai --with-runner
const [program, ...args] = exported.run.command;

const teach = tool({
  description: exported.tool.function.description,
  inputSchema: jsonSchema(exported.tool.function.parameters),
  execute: async (input) => execFileSync(program, args, { input: JSON.stringify(input), encoding: "utf8" }),
});

// As the SDK calls it once the model has chosen the tool.
const answer = await teach.execute(JSON.parse(process.argv[3]), { toolCallId: "call-1", messages: [] });
console.log(JSON.stringify({ answer: answer.trim() }));
