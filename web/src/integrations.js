// The providers' integrations (`/control/integrations`, admins and owners): each one's key
// (its last four characters only), models, teams and last test; added, tested, switched on
// and off, changed and removed in place; and every key sealed again after a rotation. Every
// action is one call of `/api/v1/integrations`. Slack has its section below them.

import { attempt as act, api, el, path, say } from "./common.js";
import { start, words } from "./control.js";
import { sayOutcome, slackSetup } from "./slack-setup.js";

const rows = document.getElementById("integrations");
const KNOWN = ["openai", "anthropic", "gemini", "groq", "mistral", "together", "deepseek", "openrouter", "xai", "perplexity", "ollama", "lmstudio", "local"];

function attempt(work, done) {
  return act(work, done, load);
}

/** `sales=gpt-4o,o3 ops` as the API takes it: `{sales: ["gpt-4o", "o3"], ops: []}`. */
function teamsOf(text) {
  const teams = {};
  for (const word of words(text.replace(/,\s+/g, ","))) {
    const [team, models = ""] = word.split("=");
    teams[team] = models.split(",").filter(Boolean);
  }
  return teams;
}

function teamsText(teams) {
  return Object.entries(teams)
    .map(([team, models]) => (models.length ? `${team}=${models.join(",")}` : team))
    .join(" ");
}

/** The kinds of database and search integrations: they serve tools, not models. */
const DATA_APIS = ["postgres", "sqlite", "searxng", "brave", "tavily"];

function row(integration) {
  const name = integration.name;
  const data = DATA_APIS.includes(integration.api);
  const models = data
    ? el("input", { value: (integration.tools ?? []).join(" "), "aria-label": `Tools of ${name}` })
    : el("input", { value: integration.models.join(" "), "aria-label": `Models of ${name}` });
  const teams = el("input", { value: teamsText(integration.teams), "aria-label": `Teams of ${name}` });
  const key = el("input", { type: "password", autocomplete: "off", placeholder: "a new key", "aria-label": `New key of ${name}` });
  const enabled = el("input", { type: "checkbox", checked: integration.enabled, "aria-label": `${name} enabled` });
  const test = integration.last_test;
  const roles = { Save: undefined, Test: "secondary", Remove: "danger" };
  const button = (label, work) => el("button", { type: "button", class: roles[label], onclick: work }, label);
  return el(
    "tr",
    { "data-integration": name },
    el("th", { scope: "row" }, name, data ? el("div", { class: "help" }, integration.api) : null, integration.base_url ? el("div", { class: "help" }, integration.base_url) : null),
    el("td", {}, integration.key_hint ? `…${integration.key_hint}` : "(none)", key),
    el("td", {}, models),
    el("td", {}, teams),
    el("td", {}, enabled),
    // The test's answer folded under its outcome: a long one never widens the table.
    el(
      "td",
      { class: "last-test" },
      test
        ? el("details", {}, el("summary", { class: test.ok ? "outcome ok" : "outcome failed" }, `${test.ok ? "ok" : "failed"} (${test.model}, ${test.latency_ms} ms)`), el("p", {}, test.detail))
        : "never",
    ),
    el(
      "td",
      { class: "actions" },
      button("Save", () => {
        const edit = { teams: teamsOf(teams.value), enabled: enabled.checked };
        edit[data ? "tools" : "models"] = words(models.value);
        if (key.value.trim()) edit.key = key.value.trim();
        return attempt(() => api(path`/integrations/${name}`, { method: "PATCH", json: edit }), `Saved ${name}.`);
      }),
      button("Test", () =>
        attempt(async () => {
          say(`Testing ${name}…`);
          const found = await api(path`/integrations/${name}/test`, { method: "POST", json: {} });
          if (!found.ok) throw new Error(`${name} failed its test: ${found.detail}`);
          return `${name} answered “${found.detail}” in ${found.latency_ms} ms.`;
        }),
      ),
      button("Remove", () => {
        if (!confirm(`Remove ${name}, and its key? Runs on its models stop.`)) return;
        return attempt(() => api(path`/integrations/${name}`, { method: "DELETE" }), `Removed ${name}.`);
      }),
    ),
  );
}

async function load() {
  const integrations = await api("/integrations");
  rows.replaceChildren(...integrations.map(row));
  if (!integrations.length) {
    rows.append(el("tr", {}, el("td", { colspan: 7 }, "No integrations: the server runs on its own configuration until one is added.")));
  }
  // Slack's section fails on its own: the providers stay shown.
  await slackSetup(document.getElementById("slack")).catch((error) => say(error.message, "error"));
}

document.getElementById("add").addEventListener("submit", async (event) => {
  event.preventDefault();
  const value = (id) => document.getElementById(id).value.trim();
  const body = {
    name: value("add-name"),
    api: value("add-api") || null,
    base_url: value("add-base-url") || null,
    key: value("add-key") || null,
    models: words(value("add-models")),
    teams: teamsOf(value("add-teams")),
    tools: words(value("add-tools")),
  };
  // The key leaves the form as soon as the server has it, before the page reloads its lists.
  await attempt(async () => {
    await api("/integrations", { method: "POST", json: body });
    event.target.reset();
  }, `Added ${body.name}.`);
});

document.getElementById("rotate").addEventListener("click", () =>
  attempt(async () => {
    const rotated = await api("/integrations/rotate", { method: "POST" });
    return `${rotated.resealed.length} key(s) sealed again with the integration key ${rotated.key_id}.`;
  }),
);

document.getElementById("known-providers").append(...KNOWN.map((name) => el("option", { value: name })));
await start(load, { what: "the integrations" });
sayOutcome();
