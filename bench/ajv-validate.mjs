// The peer of `llmtool check` in bench/check.sh: ajv validating every *.json file of a directory
// against schema/llm-tool.schema.json, in one process, with the schema compiled once.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const [schemaPath, dir] = process.argv.slice(2);
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
const validate = ajv.compile(JSON.parse(readFileSync(schemaPath, "utf8")));

let valid = 0;
let invalid = 0;
for (const name of readdirSync(dir).filter((n) => n.endsWith(".json")).sort()) {
  let document;
  try {
    document = JSON.parse(readFileSync(join(dir, name), "utf8"));
  } catch {
    invalid++;
    continue;
  }
  if (validate(document)) valid++;
  else invalid++;
}
console.log(`ajv: ${valid} valid, ${invalid} invalid`);
