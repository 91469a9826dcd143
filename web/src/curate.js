// Curating the library's tools for teams (`/control/curate`, admins and owners): a table of
// tools by teams, a box for each team's tag and one for `all` (every member), tools picked for
// a change to several at once, and the workspace's switch for the built-in tools. Every change
// is a tag put on or taken off through `/api/v1/tools/{slug}/tags/{tag}`, each in the audit log.

import { api, el, path, say } from "./common.js";
import { start } from "./control.js";

const EVERYONE = "all";
/** The most tools the page lists (pages of the search, 200 at a time). */
const MOST_TOOLS = 5000;

const head = document.getElementById("head");
const rows = document.getElementById("tools");
const bulkTeam = document.getElementById("bulk-team");
const builtIns = document.getElementById("built-ins");

let teams = [];

async function load() {
  teams = (await api("/teams")).map((team) => team.name);
  const tools = await everyTool();
  const columns = [EVERYONE, ...teams];
  head.replaceChildren(
    el("tr", {},
      el("th", { scope: "col" }, el("span", { class: "visually-hidden" }, "Pick")),
      el("th", { scope: "col" }, "Tool"),
      ...columns.map((tag) => el("th", { scope: "col" }, tag === EVERYONE ? "Everyone" : tag)),
    ),
  );
  rows.replaceChildren(...tools.map((tool) => row(tool, columns)));
  bulkTeam.replaceChildren(...columns.map((tag) => el("option", { value: tag }, tag === EVERYONE ? "Everyone (all)" : tag)));
  const workspace = await api("/workspace");
  builtIns.checked = workspace.built_ins;
  if (!tools.length) rows.replaceChildren(el("tr", {}, el("td", { colspan: String(columns.length + 2) }, "No tools yet: publish one.")));
}

/** Every tool of the library, page after page of the search. */
async function everyTool() {
  const tools = [];
  let cursor = null;
  do {
    const query = new URLSearchParams({ limit: "200" });
    if (cursor) query.set("cursor", cursor);
    const page = await api(`/tools?${query}`);
    tools.push(...page.tools);
    cursor = page.next;
  } while (cursor && tools.length < MOST_TOOLS);
  return tools;
}

function row(tool, columns) {
  const name = tool.name || tool.slug;
  return el(
    "tr", { "data-slug": tool.slug },
    el("td", {}, el("input", { type: "checkbox", class: "pick", value: tool.slug, "aria-label": `Pick ${name}` })),
    el("th", { scope: "row" }, el("a", { href: `/t/${encodeURIComponent(tool.slug)}` }, name), tool.tags.includes("built-in") ? " (built-in)" : ""),
    ...columns.map((tag) => el("td", {},
      el("input", {
        type: "checkbox",
        checked: tool.tags.includes(tag),
        "aria-label": `${name}: ${tag === EVERYONE ? "everyone" : tag}`,
        onchange: (event) => tagged([tool.slug], tag, event.target.checked),
      }),
    )),
  );
}

/** Puts `tag` on each of `slugs` (or takes it off), then lists the tools again. */
async function tagged(slugs, tag, on) {
  const method = on ? "PUT" : "DELETE";
  const failed = [];
  for (const slug of slugs) {
    await api(path`/tools/${slug}/tags/${tag}`, { method }).catch((error) => failed.push(`${slug}: ${error.message}`));
  }
  const who = tag === EVERYONE ? "every member" : `the team ${tag}`;
  if (failed.length) say(`Not all changed: ${failed.join("; ")}`, "error");
  else say(`${slugs.length === 1 ? slugs[0] : `${slugs.length} tools`} ${on ? "shown to" : "hidden from"} ${who}.`);
  await load();
}

function picked() {
  return [...rows.querySelectorAll("input.pick:checked")].map((box) => box.value);
}

document.getElementById("bulk").addEventListener("submit", (event) => {
  event.preventDefault();
  const slugs = picked();
  if (!slugs.length) return say("Pick the tools to change first.", "error");
  tagged(slugs, bulkTeam.value, true);
});

document.getElementById("bulk-remove").addEventListener("click", () => {
  const slugs = picked();
  if (!slugs.length) return say("Pick the tools to change first.", "error");
  tagged(slugs, bulkTeam.value, false);
});

builtIns.addEventListener("change", async () => {
  try {
    await api("/workspace", { method: "PUT", json: { built_ins: builtIns.checked } });
    say(builtIns.checked ? "Members see the built-in tools." : "Members no longer see the built-in tools.");
  } catch (error) {
    builtIns.checked = !builtIns.checked;
    say(error.message, "error");
  }
});

start(load, { what: "the curation of tools" });
