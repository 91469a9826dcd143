// What the library's runs spent (`/control/spend`): a period's totals, cost per day stacked
// by team, the top tools and tokens by model as charts (each with its figures as text), the
// teams and members as tables, and the period's lines as CSV. Admins see everyone's spend;
// anyone else their own. One call of `/api/v1/spend` a period.

import { api, canAct, dollars, el, say } from "./common.js";
import { bars, stackedColumns } from "./chart.js";
import { count, start } from "./control.js";

const from = document.getElementById("from");
const to = document.getElementById("to");
const team = document.getElementById("team");

/** The period in the address (`?from=&to=&team=`), else this month so far. */
function period() {
  const query = new URLSearchParams(location.search);
  const today = new Date().toISOString().slice(0, 10);
  from.value = query.get("from") || `${today.slice(0, 8)}01`;
  to.value = query.get("to") || today;
  return query.get("team") || "";
}

function query() {
  const params = new URLSearchParams({ from: from.value, to: to.value });
  if (team.value) params.set("team", team.value);
  return params;
}

function line(key, totals) {
  return el(
    "tr",
    {},
    el("th", { scope: "row" }, key || "(none)"),
    el("td", {}, count(totals.runs)),
    el("td", {}, count(totals.input_tokens)),
    el("td", {}, count(totals.output_tokens)),
    el("td", {}, dollars(totals.cost_usd)),
  );
}

async function load() {
  const params = query();
  history.replaceState(null, "", `?${params}`);
  document.getElementById("csv").href = `/api/v1/spend?${params}&format=csv`;
  const report = await api(`/spend?${params}`);
  const { totals } = report;
  document.getElementById("totals").replaceChildren(
    ...[["Cost", dollars(totals.cost_usd)], ["Runs", count(totals.runs)], ["Input tokens", count(totals.input_tokens)], ["Output tokens", count(totals.output_tokens)]]
      .flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value)]),
  );

  // Cost per day, stacked by team: every day of the period, the empty ones too.
  const days = [];
  for (let day = new Date(`${report.from}T00:00:00Z`); day < new Date(`${report.to}T00:00:00Z`); day.setUTCDate(day.getUTCDate() + 1)) {
    days.push(day.toISOString().slice(0, 10));
  }
  const teams = report.by_team.map((line) => line.key);
  const values = {};
  for (const spent of report.by_day) (values[spent.day] ??= {})[spent.team] = spent.cost_usd;
  const costliest = report.by_day.reduce((most, d) => (d.cost_usd > (most?.cost_usd ?? -1) ? d : most), null);
  const busiest = costliest ? ` The costliest day and team: ${costliest.day}, ${costliest.team || "no team"}, ${dollars(costliest.cost_usd)}.` : "";
  // A period with no runs: what to do, not a blank chart.
  const none = report.totals.runs === 0;
  const noRuns = () => el("p", { class: "empty" }, "No runs yet in this period. Run a tool from the ", el("a", { href: "/" }, "gallery"), " and its cost shows here.");
  for (const id of ["tools-chart", "models-chart"]) document.getElementById(id).closest("section").hidden = none;
  document.getElementById("days-chart").nextElementSibling.hidden = none;
  document.getElementById("days-chart").replaceChildren(
    none ? noRuns() : stackedColumns({
      title: `Cost per day from ${report.from}, by team`,
      description: `${dollars(totals.cost_usd)} over ${days.length} days across ${teams.length} team(s).${busiest} The table below gives every figure.`,
      days,
      series: teams,
      values,
      format: dollars,
    }),
  );
  document.getElementById("days").replaceChildren(
    ...report.by_day.map((d) => el("tr", {}, el("td", {}, d.day), el("td", {}, d.team || "(none)"), el("td", {}, count(d.runs)), el("td", {}, dollars(d.cost_usd)))),
  );

  const top = report.by_tool.slice(0, 10);
  document.getElementById("tools-chart").replaceChildren(
    bars({
      title: "Top tools by cost",
      description: top.length ? top.map((t) => `${t.key}: ${dollars(t.cost_usd)} over ${count(t.runs)} runs`).join("; ") : "No runs in the period.",
      items: top.map((t) => ({ label: t.key, value: t.cost_usd })),
      format: dollars,
    }),
  );
  document.getElementById("models-chart").replaceChildren(
    bars({
      title: "Tokens by model",
      description: report.by_model.length
        ? report.by_model.map((m) => `${m.key}: ${count(m.input_tokens)} in, ${count(m.output_tokens)} out`).join("; ")
        : "No runs in the period.",
      items: report.by_model.map((m) => ({ label: m.key, value: m.input_tokens + m.output_tokens })),
      format: count,
    }),
  );
  document.getElementById("teams").replaceChildren(...report.by_team.map((l) => line(l.key, l)));
  document.getElementById("members").replaceChildren(...report.by_member.map((l) => line(l.key, l)));
}

document.getElementById("period").addEventListener("submit", async (event) => {
  event.preventDefault();
  await load().catch((error) => say(error.message, "error"));
});

await start(
  async (caller) => {
    const chosen = period();
    if (canAct(caller, "admin")) {
      const teams = await api("/teams");
      team.append(...teams.map((t) => el("option", { value: t.name, selected: t.name === chosen }, t.name)));
    } else {
      document.getElementById("team-field").hidden = true;
      document.querySelector("h1").textContent = "Your spend";
    }
    await load();
  },
  { adminsOnly: false },
);
