// The gallery (`/`): the library's tools as cards, searched as you type, filtered by tag.

import { api, el, header, path, say, withCode } from "./common.js";

const results = document.getElementById("results");
const search = document.getElementById("search");
const tags = document.getElementById("tags");
const more = document.getElementById("more");
const closed = document.getElementById("closed");
let chosenTag = new URLSearchParams(location.search).get("tag") || "";
let cursor = null;
let asked = 0;

function card(tool) {
  const name = tool.name || tool.slug;
  const avatar = tool.has_avatar
    ? el("img", { class: "avatar", src: path`/api/v1/tools/${tool.slug}/avatar`, alt: "", width: 48, height: 48 })
    : el("span", { class: "avatar placeholder", "aria-hidden": "true" }, name.slice(0, 1).toUpperCase());
  return el(
    "li",
    { class: "card" },
    avatar,
    el(
      "div",
      { class: "card-body" },
      el("h2", {}, el("a", { href: path`/t/${tool.slug}` }, name)),
      tool.description ? el("p", { class: "description" }, withCode(tool.description)) : null,
      el(
        "p",
        { class: "facts" },
        tool.kind === "smart" ? el("span", { class: "kind smart", title: "Runs Python code in the server's sandbox" }, "smart") : null,
        tool.creator ? el("span", { class: "creator" }, `by ${tool.creator}`) : null,
        tool.output_type ? el("span", { class: "output" }, `answers: ${tool.output_type}`) : null,
        el("span", { class: "version" }, `v${tool.version}`),
      ),
      tool.tags.length
        ? el("ul", { class: "tags", "aria-label": "Tags" }, tool.tags.map((tag) => el("li", {}, tag)))
        : null,
    ),
  );
}

async function load({ append = false } = {}) {
  const ask = ++asked;
  const query = new URLSearchParams({ limit: "24" });
  if (search.value.trim()) query.set("q", search.value.trim());
  if (chosenTag) query.set("tag", chosenTag);
  if (append && cursor) query.set("cursor", cursor);
  try {
    const page = await api(`/tools?${query}`);
    if (ask !== asked) return; // A newer search has started.
    const cards = page.tools.map(card);
    if (append) results.append(...cards);
    else results.replaceChildren(...cards);
    cursor = page.next || null;
    more.hidden = !cursor;
    const shown = results.children.length;
    say(shown ? `${shown} tool${shown === 1 ? "" : "s"}${cursor ? " so far" : ""}` : "No tool matches.");
  } catch (error) {
    if (error.status === 401) {
      // A library open to its members only: nothing to search until one signs in.
      results.replaceChildren();
      search.disabled = true;
      tags.replaceChildren();
      more.hidden = true;
      say("");
      closed.hidden = false;
    } else {
      say(`The search failed: ${error.message}`, "error");
    }
  }
}

async function loadTags() {
  let counts = [];
  try {
    counts = await api("/tags");
  } catch {
    return;
  }
  const button = (tag, label) =>
    el(
      "button",
      {
        type: "button",
        "aria-pressed": String(chosenTag === tag),
        onclick: () => {
          chosenTag = chosenTag === tag ? "" : tag;
          for (const other of tags.querySelectorAll("button")) {
            other.setAttribute("aria-pressed", String(other.dataset.tag === chosenTag));
          }
          load();
        },
        "data-tag": tag,
      },
      label,
    );
  tags.replaceChildren(
    button("", "All"),
    ...counts.map(({ tag, tools }) => button(tag, `${tag} (${tools})`)),
  );
}

let typing = null;
search.addEventListener("input", () => {
  clearTimeout(typing);
  typing = setTimeout(() => load(), 120);
});
more.addEventListener("click", () => load({ append: true }));

header();
loadTags();
load();
