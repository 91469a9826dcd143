// The library's teams (`/teams`, admins and owners): made, renamed (their tag on every tool
// follows) and removed; and the workspace's switches for the built-in tools and for public
// snapshots. Every action is one
// call of `/api/v1/teams` or `/api/v1/workspace`.

import { attempt as act, api, canAct, el, header, path, say } from "./common.js";

const rows = document.getElementById("teams");
const builtIns = document.getElementById("built-ins");
const publicSnapshots = document.getElementById("public-snapshots");

/** An action of the page, then the list again. */
function attempt(work, done) {
  return act(work, done, load);
}

function row(team) {
  const rename = el("input", { value: team.name, "aria-label": `New name of ${team.name}` });
  return el(
    "tr",
    { "data-team": team.name },
    el("th", { scope: "row" }, team.name),
    el("td", {}, String(team.members)),
    el("td", {}, el("a", { href: `/?tag=${encodeURIComponent(team.name)}` }, String(team.tools))),
    el("td", {}, rename),
    el(
      "td",
      { class: "actions" },
      el("button", {
        type: "button",
        onclick: () => attempt(
          () => api(path`/teams/${team.name}`, { method: "PATCH", json: { name: rename.value.trim() } }),
          `Renamed ${team.name} to ${rename.value.trim()}, with its tag on every tool.`,
        ),
      }, "Rename"),
      el("button", {
        type: "button",
        class: "danger",
        onclick: () => {
          if (!confirm(`Remove the team ${team.name}? Its tools keep the tag.`)) return;
          attempt(() => api(path`/teams/${team.name}`, { method: "DELETE" }), `Removed ${team.name}.`);
        },
      }, "Remove"),
    ),
  );
}

async function load() {
  const [teams, workspace] = await Promise.all([api("/teams"), api("/workspace")]);
  rows.replaceChildren(...teams.map(row));
  builtIns.checked = workspace.built_ins;
  publicSnapshots.checked = workspace.public_snapshots;
}

document.getElementById("create").addEventListener("submit", async (event) => {
  event.preventDefault();
  const name = document.getElementById("create-name").value.trim();
  await attempt(() => api("/teams", { method: "POST", json: { name } }), `Made the team ${name}: tag tools ${name} for its members to see them.`);
  event.target.reset();
});

builtIns.addEventListener("change", () =>
  attempt(
    () => api("/workspace", { method: "PUT", json: { built_ins: builtIns.checked } }),
    builtIns.checked ? "Members see the built-in tools again." : "The built-in tools are switched off for members.",
  ),
);

publicSnapshots.addEventListener("change", () =>
  attempt(
    () => api("/workspace", { method: "PUT", json: { public_snapshots: publicSnapshots.checked } }),
    publicSnapshots.checked ? "Members may publish public snapshots." : "Public snapshots are off: none is shown until they are switched on again.",
  ),
);

const caller = await header();
if (!canAct(caller, "admin")) {
  say("Only admins and owners manage the library's teams.", "error");
  for (const form of document.querySelectorAll("form")) form.hidden = true;
  builtIns.disabled = true;
  publicSnapshots.disabled = true;
} else {
  await load().catch((error) => say(error.message, "error"));
}
