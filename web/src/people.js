// The library's members (`/people`, admins and owners): each member's name, role and teams
// changed in place, an invite sent, a member removed; members added one by one or from a CSV
// file (all rows or none). Every action is one call of `/api/v1/members`.

import { attempt as act, api, canAct, el, header, path, say, withCode } from "./common.js";
import { copyButton } from "./markdown.js";

const ROLES = ["viewer", "editor", "admin", "owner"];
const rows = document.getElementById("members");
const problems = document.getElementById("import-problems");
let caller = null;

/** Team names typed in a field: separated by spaces or commas. */
function teamsOf(text) {
  return text.split(/[\s,;]+/).filter(Boolean);
}

function roleSelect(id, chosen, label) {
  // Only an owner gives or takes the owner's role.
  const offered = ROLES.filter((role) => role !== "owner" || caller.role === "owner" || chosen === "owner");
  return el(
    "select",
    { id, "aria-label": label },
    offered.map((role) => el("option", { value: role, selected: role === chosen }, role)),
  );
}

function row(member) {
  const id = member.email.replace(/[^a-z0-9]/g, "-");
  const name = el("input", { id: `name-${id}`, value: member.name, "aria-label": `Name of ${member.email}` });
  const role = roleSelect(`role-${id}`, member.role, `Role of ${member.email}`);
  const teams = el("input", { id: `teams-${id}`, value: member.teams.join(" "), "aria-label": `Teams of ${member.email}` });
  // Buttons by role: Save is the row's main action, Invite a second one, Remove destroys.
  const roles = { Save: undefined, Invite: "secondary", Remove: "danger" };
  const act = (label, work) => el("button", { type: "button", class: roles[label], onclick: work }, label);
  return el(
    "tr",
    { "data-email": member.email },
    el("td", {}, member.email),
    el("td", {}, name),
    el("td", {}, role),
    el("td", {}, teams),
    el(
      "td",
      { class: "actions" },
      act("Save", async () => {
        const edit = { name: name.value, role: role.value, teams: teamsOf(teams.value) };
        await attempt(() => api(path`/members/${member.email}`, { method: "PATCH", json: edit }), `Saved ${member.email}.`);
      }),
      act("Invite", async () => {
        await attempt(async () => {
          const sent = await api(path`/members/${member.email}/invite`, { method: "POST" });
          if (!sent.path) return `Sent ${sent.email} a sign-in link (it works once, until ${sent.expires_at}).`;
          showLink(sent);
          return `This server sends no mail: copy ${sent.email}'s sign-in link and hand it over yourself.`;
        });
      }),
      act("Remove", async () => {
        if (!confirm(`Remove ${member.email}? Their tokens are revoked and their sessions end.`)) return;
        await attempt(() => api(path`/members/${member.email}`, { method: "DELETE" }), `Removed ${member.email}.`);
      }),
    ),
  );
}

/** A sign-in link made on a server that sends no mail, with a button that copies it. */
function showLink(invite) {
  const address = new URL(invite.path, location.origin).href;
  const field = el("input", { type: "text", readonly: true, value: address, "aria-label": `Sign-in link of ${invite.email}`, class: "share-address" });
  const until = new Date(invite.expires_at).toLocaleString();
  document.getElementById("invite-link").replaceChildren(
    el("h2", {}, `Sign-in link of ${invite.email}`),
    el("p", {}, field, " ", copyButton(() => address, "Copy link")),
    el("p", { class: "help" }, `It signs ${invite.email} in once, until ${until}. Hand it to them alone.`),
  );
}

/** An action of the page, then the list again. */
function attempt(work, done) {
  return act(work, done, load);
}

async function load() {
  const members = await api("/members");
  rows.replaceChildren(...members.map(row));
}

document.getElementById("add").addEventListener("submit", async (event) => {
  event.preventDefault();
  const member = {
    email: document.getElementById("add-email").value.trim(),
    name: document.getElementById("add-name").value.trim(),
    role: document.getElementById("add-role").value,
    teams: teamsOf(document.getElementById("add-teams").value),
  };
  await attempt(async () => {
    await api("/members", { method: "POST", json: member });
    event.target.reset();
  }, `Added ${member.email}.`);
});

document.getElementById("import").addEventListener("submit", async (event) => {
  event.preventDefault();
  const file = document.getElementById("import-file").files[0];
  const dryRun = document.getElementById("import-dry-run").checked;
  problems.replaceChildren();
  if (!file) return;
  const text = await file.text();
  await attempt(async () => {
    try {
      const done = await api(`/members/import${dryRun ? "?dry_run=true" : ""}`, { method: "POST", text });
      const count = `${done.members} member${done.members === 1 ? "" : "s"}`;
      return done.dry_run
        ? `${file.name}: ${count} would be added (a check only: nobody was).`
        : `${file.name}: ${count} added.`;
    } catch (error) {
      const rowsRefused = error.problem?.diagnostics || [];
      problems.replaceChildren(...rowsRefused.map((p) => el("li", { class: "error" }, el("span", { class: "code" }, `line ${p.line}`), " ", ...withCode(p.message))));
      throw error;
    }
  });
});

caller = await header();
if (!canAct(caller, "admin")) {
  say("Only admins and owners manage the library's people.", "error");
  for (const form of document.querySelectorAll("form")) form.hidden = true;
} else {
  document.getElementById("add-role").replaceWith(roleSelect("add-role", "viewer"));
  await load().catch((error) => say(error.message, "error"));
}
