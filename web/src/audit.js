// The audit log (`/control/audit`, admins and owners): every change, newest first, filtered
// by who, what kind, what and since when, a page at a time. One call of `/api/v1/audit` a page.

import { api, el, say } from "./common.js";
import { start } from "./control.js";

const rows = document.getElementById("records");
const older = document.getElementById("older");
const ACTIONS = ["member.add", "member.edit", "member.remove", "member.invite", "team.create", "team.rename", "team.remove", "workspace.edit", "tool.publish", "tool.delete", "tag.add", "tag.remove", "label.set", "token.create", "token.revoke", "integration.add", "integration.edit", "integration.remove", "integration.rotate", "price.set", "price.remove", "budget.set", "budget.remove"];
let cursor = null;

/** A before or after: its fields on lines, or a dash. */
function shown(value) {
  if (value === null || value === undefined) return "–";
  if (typeof value !== "object") return String(value);
  return el("dl", { class: "change" }, Object.entries(value).flatMap(([key, field]) => [el("dt", {}, key), el("dd", {}, typeof field === "object" ? JSON.stringify(field) : String(field))]));
}

function row(record) {
  return el(
    "tr",
    {},
    el("td", {}, el("time", { datetime: record.at }, record.at.replace("T", " ").slice(0, 19))),
    el("td", {}, record.actor),
    el("td", {}, record.address || "–"),
    el("td", {}, el("code", {}, record.action)),
    el("td", {}, record.target),
    el("td", {}, shown(record.before)),
    el("td", {}, shown(record.after)),
  );
}

function filters() {
  const params = new URLSearchParams({ limit: "50" });
  for (const name of ["actor", "action", "target", "since"]) {
    const value = document.getElementById(name).value.trim();
    if (value) params.set(name, value);
  }
  return params;
}

async function load(more = false) {
  const params = filters();
  if (more && cursor) params.set("cursor", cursor);
  const page = await api(`/audit?${params}`);
  if (more) rows.append(...page.records.map(row));
  else rows.replaceChildren(...page.records.map(row));
  if (!more && !page.records.length) rows.append(el("tr", {}, el("td", { colspan: 7 }, "No changes match.")));
  cursor = page.next;
  older.hidden = !cursor;
}

document.getElementById("filters").addEventListener("submit", async (event) => {
  event.preventDefault();
  await load().catch((error) => say(error.message, "error"));
});
older.addEventListener("click", () => load(true).catch((error) => say(error.message, "error")));
document.getElementById("actions").append(...ACTIONS.map((action) => el("option", { value: action })));
await start(() => load(), { what: "the audit log" });
