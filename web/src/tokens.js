// A member's own API tokens (an admin may list everyone's): each one's name, role, expiry and
// last use; a new one, shown once; revoking, which takes effect at once.

import { api, attempt, canAct, el, header, path, say } from "./common.js";

const main = document.getElementById("main");
let everyone = false;

async function load() {
  const caller = await header();
  if (!caller) {
    const signIn = el("a", { href: `/signin?next=${encodeURIComponent("/tokens")}` }, "Sign in");
    main.replaceChildren(el("h1", {}, "Your tokens"), el("p", {}, signIn, " to see your tokens."));
    return;
  }
  const tokens = await api(`/tokens${everyone ? "?all=true" : ""}`);
  const rows = tokens.map((token) => {
    const state = token.revoked ? "revoked" : token.expires_at && token.expires_at < new Date().toISOString() ? "expired" : "live";
    const revoke = state === "live"
      ? el("button", { type: "button", "aria-label": `Revoke ${token.name}`, onclick: () => attempt(() => api(path`/tokens/${token.name}`, { method: "DELETE" }), `${token.name} is revoked`, load) }, "Revoke")
      : null;
    return el(
      "tr", {},
      el("th", { scope: "row" }, token.name),
      everyone ? el("td", {}, token.member || "") : null,
      el("td", {}, token.role),
      el("td", {}, day(token.created_at)),
      el("td", {}, token.expires_at ? day(token.expires_at) : "never"),
      el("td", {}, token.last_used_at ? day(token.last_used_at) : "never"),
      el("td", {}, state),
      el("td", {}, revoke),
    );
  });
  const heads = ["Name", everyone ? "Member" : null, "Role", "Made", "Expires", "Last used", "State", ""].filter((h) => h !== null);
  const table = tokens.length
    ? el("table", {}, el("thead", {}, el("tr", {}, ...heads.map((h) => el("th", { scope: "col" }, h)))), el("tbody", {}, ...rows))
    : el("p", { class: "empty" }, "No tokens yet. Make one below, or sign a terminal in with ", el("code", {}, "llmtool login"), ".");
  const switcher = canAct(caller, "admin")
    ? el("p", {}, el("label", {}, el("input", { type: "checkbox", checked: everyone, onchange: (event) => { everyone = event.target.checked; load(); } }), " Everyone's tokens"))
    : null;
  main.replaceChildren(el("h1", {}, "Your tokens"), el("p", {}, "A token lets a program (the llmtool CLI, a script, an editor) act as you, with a role no higher than yours."), switcher, table, newTokenForm(caller));
}

function day(stamp) {
  return stamp.slice(0, 10);
}

/** The form that makes a token; the token is shown once, above the table. */
function newTokenForm(caller) {
  const roles = ["viewer", "editor", "admin", "owner"].filter((role) => canAct(caller, role));
  const name = el("input", { id: "token-name", name: "name", required: true, pattern: "[A-Za-z0-9._\\-]{1,64}", autocomplete: "off" });
  const days = el("input", { id: "token-days", name: "days", type: "number", min: "1", max: "366", value: "90", required: true });
  const role = el("select", { id: "token-role", name: "role" }, ...roles.map((r) => el("option", { value: r, selected: r === caller.role }, r)));
  const make = async (event) => {
    event.preventDefault();
    try {
      const made = await api("/tokens", { method: "POST", json: { name: name.value.trim(), days: Number(days.value), role: role.value } });
      await load();
      const shown = el("input", { readonly: true, value: made.token, "aria-label": "The new token", size: "70" });
      main.insertBefore(el("section", { class: "made", "aria-live": "polite" }, el("h2", {}, `Your new token ${made.name}`), el("p", {}, "Copy it now: it is not shown again."), shown), main.children[2]);
      shown.select();
    } catch (error) {
      say(error.message, "error");
    }
  };
  return el(
    "form", { onsubmit: make },
    el("h2", {}, "New token"),
    el("label", { for: "token-name" }, "Name"), name,
    el("label", { for: "token-days" }, "Days it works"), days,
    el("label", { for: "token-role" }, "Role"), role,
    el("button", { type: "submit" }, "Make the token"),
  );
}

load().catch((error) => say(error.message, "error"));
