// Model prices (`/control/prices`): every model runs may use, with the shipped table's price
// (and its source and date), the admins' own price and markup, and the price runs are charged.
// Admins set and remove prices; everyone signed in reads them. One call of `/api/v1/prices`.

import { attempt as act, api, canAct, el } from "./common.js";
import { start } from "./control.js";

const rows = document.getElementById("prices");
let admin = false;

function attempt(work, done) {
  return act(work, done, load);
}

/** A price per million tokens, or a dash. */
function money(amount) {
  return amount === null || amount === undefined ? "–" : `$${Number(amount).toLocaleString("en-US", { maximumFractionDigits: 4 })}`;
}

/** An image model's picture prices (per million picture tokens, and each), or a dash. */
function pictures(price) {
  const parts = [];
  if (price?.image_output !== undefined && price?.image_output !== null) parts.push(`${money(price.image_output)}/M tokens`);
  if (price?.per_image !== undefined && price?.per_image !== null) parts.push(`${money(price.per_image)} each`);
  return parts.length ? parts.join(", ") : "–";
}

function row(line) {
  const set = line.override;
  const mine = set
    ? [
        [set.input, "in"],
        [set.output, "out"],
        [set.image_output, "picture tokens"],
      ]
        .filter(([amount]) => amount !== null && amount !== undefined)
        .map(([amount, what]) => `${money(amount)} ${what}`)
        .concat(set.per_image !== null && set.per_image !== undefined ? [`${money(set.per_image)} a picture`] : [])
        .concat(set.markup_percent !== null && set.markup_percent !== undefined ? [`+${set.markup_percent}%`] : [])
        .concat(set.note ? [`(${set.note})`] : [])
        .join(" ")
    : "";
  return el(
    "tr",
    { "data-model": line.model },
    el("th", { scope: "row" }, line.model),
    el("td", {}, money(line.shipped?.input)),
    el("td", {}, money(line.shipped?.cached_input)),
    el("td", {}, money(line.shipped?.output)),
    el("td", {}, line.shipped?.batch_input ? `${money(line.shipped.batch_input)} / ${money(line.shipped.batch_output)}` : "–"),
    el("td", { title: line.source || "" }, money(line.effective?.input)),
    el("td", { title: line.source || "" }, money(line.effective?.output)),
    el("td", { title: line.source || "" }, pictures(line.effective)),
    el(
      "td",
      {},
      mine || (line.effective ? "" : "unpriced"),
      set && admin
        ? el("button", {
            type: "button",
            class: "danger",
            "aria-label": `Remove your price of ${line.model}`,
            onclick: () => attempt(() => api(`/prices?model=${encodeURIComponent(line.model)}`, { method: "DELETE" }), `Removed your price of ${line.model}: the table's is charged.`),
          }, "Remove")
        : null,
    ),
  );
}

async function load() {
  const prices = await api("/prices");
  document.getElementById("table-source").textContent =
    `The shipped table: ${prices.table}, refreshed ${prices.refreshed}.` + (prices.markup_percent ? ` A markup of ${prices.markup_percent}% is on every model.` : "");
  document.getElementById("markup-percent").value = prices.markup_percent ?? "";
  rows.replaceChildren(...prices.models.map(row));
  document.getElementById("priced-models").replaceChildren(...prices.models.map((line) => el("option", { value: line.model })));
}

const number = (id) => {
  const text = document.getElementById(id).value;
  return text === "" ? null : Number(text);
};

document.getElementById("set").addEventListener("submit", async (event) => {
  event.preventDefault();
  const price = {
    model: document.getElementById("set-model").value.trim(),
    input: number("set-input"),
    cached_input: number("set-cached"),
    output: number("set-output"),
    image_output: number("set-image-output"),
    per_image: number("set-per-image"),
    markup_percent: number("set-markup"),
    note: document.getElementById("set-note").value.trim() || null,
  };
  await attempt(() => api("/prices", { method: "PUT", json: price }), `Set your price of ${price.model}.`);
});

document.getElementById("markup").addEventListener("submit", async (event) => {
  event.preventDefault();
  const markup = number("markup-percent");
  await attempt(
    () => (markup === null ? api("/prices?model=*", { method: "DELETE" }) : api("/prices", { method: "PUT", json: { model: "*", markup_percent: markup } })),
    markup === null ? "No markup any more." : `A markup of ${markup}% is on every model.`,
  );
});

await start(
  async (caller) => {
    admin = canAct(caller, "admin");
    if (!admin) for (const form of document.querySelectorAll("main form")) form.hidden = true;
    await load();
  },
  { adminsOnly: false },
);
