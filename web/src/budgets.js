// The budgets (`/control/budgets`): each team's and member's limit, and where its period
// stands (spent, held by runs in flight, the share used); admins set and remove them, anyone
// else sees the budgets that bound them. Every action is one call of `/api/v1/budgets`.

import { attempt as act, api, canAct, dollars, el, path } from "./common.js";
import { start } from "./control.js";

const rows = document.getElementById("budgets");
let admin = false;

function attempt(work, done) {
  return act(work, done, load);
}

function row(status) {
  const { budget } = status;
  const used = budget.limit_usd > 0 ? (status.spent_usd + status.reserved_usd) / budget.limit_usd : 0;
  const state = used >= 1 ? "over" : used >= budget.warn_at ? "warning" : "ok";
  const who = `${budget.scope} ${budget.name}`;
  return el(
    "tr",
    { "data-budget": `${budget.scope}:${budget.name}` },
    el("th", { scope: "row" }, `${budget.scope === "team" ? "Team" : "Member"} ${budget.name}`),
    el("td", {}, `${budget.period} from ${status.period_start}`),
    el("td", {}, dollars(status.spent_usd)),
    el("td", {}, dollars(status.reserved_usd)),
    el("td", {}, dollars(budget.limit_usd)),
    el("td", {}, el("meter", { min: 0, max: 1, low: budget.warn_at, high: 0.9999, optimum: 0, value: Math.min(used, 1), "aria-label": `${who}: ${Math.round(used * 100)}% used` }), ` ${Math.round(used * 100)}% `, el("span", { class: `state ${state}` }, state)),
    el("td", {}, `${budget.hard ? "hard" : "warning only"}, warns at ${Math.round(budget.warn_at * 100)}%`),
    el(
      "td",
      { class: "actions" },
      admin
        ? el("button", {
            type: "button",
            class: "danger",
            onclick: () => {
              if (!confirm(`Remove the budget of ${who}?`)) return;
              attempt(() => api(path`/budgets/${budget.scope}/${budget.name}`, { method: "DELETE" }), `Removed the budget of ${who}.`);
            },
          }, "Remove")
        : null,
    ),
  );
}

async function load() {
  const statuses = await api("/budgets");
  rows.replaceChildren(...statuses.map(row));
  if (!statuses.length) rows.append(el("tr", {}, el("td", { colspan: 8 }, "No budgets.")));
}

document.getElementById("set").addEventListener("submit", async (event) => {
  event.preventDefault();
  const value = (id) => document.getElementById(id).value;
  const scope = value("set-scope");
  const name = value("set-name").trim();
  const body = {
    period: value("set-period"),
    limit_usd: Number(value("set-limit")),
    warn_at: Number(value("set-warn") || 80) / 100,
    hard: document.getElementById("set-hard").checked,
  };
  await attempt(() => api(path`/budgets/${scope}/${name}`, { method: "PUT", json: body }), `Set the budget of ${scope} ${name}: ${dollars(body.limit_usd)} a ${body.period}.`);
});

await start(
  async (caller) => {
    admin = canAct(caller, "admin");
    if (!admin) document.getElementById("set").hidden = true;
    await load();
  },
  { adminsOnly: false },
);
