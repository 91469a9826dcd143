// The web wording of the server's messages, on messages the server sends: what happened stays,
// the flags, commands and config keys go (no hint reaches a page as text).

import { test } from "node:test";
import assert from "node:assert/strict";
import { webWording } from "../src/wording.js";

const CASES = [
  ["this server does not run smart tools (its operator enables them with `--smart-tools`)", "this server does not run smart tools"],
  [
    "the tool's requirements (numpy, pandas) are not fetched on this server: its operator fetches them once with `llmtool sandbox pull --requirements FILE`",
    "the tool's requirements (numpy, pandas) are not fetched on this server: its operator fetches them once",
  ],
  [
    "`openai` is not an enabled integration of this library: an admin adds it in the Control Center (or `llmtool integration add`)",
    "`openai` is not an enabled integration of this library: an admin adds it in the Control Center",
  ],
  [
    "2 tool(s) carry the tag `sales` already, put on before the team existed: the team's members would see them at once. Take the tag off them first, or make the team adopting them (`--adopt-tagged`, or `\"adopt_tagged\": true`)",
    "2 tool(s) carry the tag `sales` already, put on before the team existed: the team's members would see them at once. Take the tag off them first, or make the team adopting them",
  ],
  [
    "no local model `tiny`: give a .gguf file (`--model local:PATH.gguf`), a name from the catalog (`llmtool model catalog`), or the name of one `llmtool model list` shows",
    "no local model `tiny`: the server's operator can change this",
  ],
  ["run `llmtool model pull tiny` (or start the server with `--yes`)", "this needs the server's operator"],
  ["single sign-on needs the studio's address for its redirect: `public_url` in `[server]`, or `--public-url`", "single sign-on needs the studio's address for its redirect: the server's operator can change this"],
  ["no conversation `01jq`", "no conversation `01jq`"],
  ["the follow-up is empty", "the follow-up is empty"],
];

test("a page says what happened, and no flag, command or config key", () => {
  for (const [detail, page] of CASES) {
    const worded = webWording(detail);
    assert.equal(worded, page);
    assert.doesNotMatch(worded, /--[a-z]|llmtool [a-z]|\[server/, detail);
  }
});
