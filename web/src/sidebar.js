// The workspace's sidebar on every signed-in page: the member's conversations, newest first,
// grouped by day, searched by title and by what their turns say, each one's own address
// (`/c/ID`), with rename, archive and delete; more come a page at a time.

import { api, el, path, say } from "./common.js";

const PAGE = 50;

/** Puts the sidebar before the page's `<main>` (once) and fills it. */
export function sidebar() {
  if (document.querySelector("aside.sidebar")) return;
  const main = document.querySelector("main");
  if (!main) return;
  const list = el("div", { class: "conversation-list" });
  const more = el("button", { type: "button", class: "quiet", hidden: true }, "Load more");
  const search = el("input", { type: "search", id: "conversation-search", placeholder: "Title or words", autocomplete: "off" });
  const archived = el("input", { type: "checkbox", id: "conversation-archived" });
  const state = { cursor: null, items: [], timer: null };

  async function load(reset) {
    if (reset) {
      state.cursor = null;
      state.items = [];
    }
    const query = new URLSearchParams({ mine: "true", limit: String(PAGE) });
    if (archived.checked) query.set("archived", "true");
    if (search.value.trim()) query.set("q", search.value.trim().slice(0, 200));
    if (state.cursor) query.set("cursor", state.cursor);
    const response = await fetch(`/api/v1/conversations?${query}`, { credentials: "same-origin" });
    if (!response.ok) {
      list.replaceChildren(el("p", { class: "help" }, "The conversations could not be listed."));
      return;
    }
    state.items.push(...(await response.json()));
    state.cursor = response.headers.get("x-next-cursor");
    more.hidden = !state.cursor;
    show();
  }

  function show() {
    if (!state.items.length) {
      const empty = search.value.trim()
        ? "No conversation matches."
        : archived.checked
          ? "No archived conversations."
          : "No conversations yet: run a tool to start one.";
      list.replaceChildren(el("p", { class: "help" }, empty));
      return;
    }
    const groups = new Map();
    for (const item of state.items) {
      const group = dayGroup(item.last_at);
      if (!groups.has(group)) groups.set(group, []);
      groups.get(group).push(item);
    }
    list.replaceChildren(
      ...[...groups].map(([group, items]) =>
        el("section", { class: "day" }, el("h3", {}, group), el("ul", {}, items.map((item) => row(item)))),
      ),
    );
  }

  function row(item) {
    const here = location.pathname === `/c/${item.id}`;
    const link = el("a", { href: path`/c/${item.id}`, "aria-current": here ? "page" : null, title: item.title }, item.title || "Conversation", item.joined ? el("span", { class: "joined" }, " · joined") : null);
    const li = el("li", {});
    // One joined as a collaborator is its owner's to rename, archive or delete: its menu leaves.
    const actions = item.joined
      ? [el("button", { type: "button", class: "danger", onclick: () => leave(item) }, "Leave")]
      : [
          el("button", { type: "button", class: "quiet", onclick: () => rename(item, li) }, "Rename"),
          el("button", { type: "button", class: "quiet", onclick: () => archive(item) }, item.archived ? "Unarchive" : "Archive"),
          el("button", { type: "button", class: "danger", onclick: () => remove(item) }, "Delete"),
        ];
    const menu = el("details", { class: "row-menu" }, el("summary", { "aria-label": `Actions for ${item.title}` }, "⋯"), el("div", { class: "menu" }, ...actions));
    li.append(link, menu);
    return li;
  }

  /** Renames `item` in its row `li`: its title as a field, saved on Enter, put back on Escape. */
  function rename(item, li) {
    const field = el("input", { type: "text", value: item.title, maxlength: 200, "aria-label": "Title", required: true });
    const put = () => li.replaceChildren(...row(item).childNodes);
    const form = el(
      "form",
      {
        class: "rename",
        onsubmit: async (event) => {
          event.preventDefault();
          try {
            await api(path`/conversations/${item.id}`, { method: "PATCH", json: { title: field.value } });
            say("Renamed.");
            await changed(item.id);
          } catch (error) {
            say(error.message, "error");
          }
        },
      },
      field,
      el("button", { type: "submit", class: "quiet" }, "Save"),
      el("button", { type: "button", class: "quiet", onclick: put }, "Cancel"),
    );
    field.addEventListener("keydown", (event) => {
      if (event.key === "Escape") put();
    });
    li.replaceChildren(form);
    field.focus();
    field.select();
  }

  async function archive(item) {
    try {
      await api(path`/conversations/${item.id}`, { method: "PATCH", json: { archived: !item.archived } });
      say(item.archived ? "Back in the list." : "Archived.");
      await load(true);
    } catch (error) {
      say(error.message, "error");
    }
  }

  async function leave(item) {
    if (!confirm(`Leave "${item.title}"? You no longer read it or add turns, unless its owner's link brings you back.`)) return;
    try {
      await api(path`/conversations/${item.id}/collaborators/me`, { method: "DELETE" });
      say("You left the conversation.");
      if (location.pathname === `/c/${item.id}`) location.assign("/");
      else await load(true);
    } catch (error) {
      say(error.message, "error");
    }
  }

  async function remove(item) {
    if (!confirm(`Delete "${item.title}"? Its turns and pictures go for good; its cost stays in the spend.`)) return;
    try {
      await api(path`/conversations/${item.id}`, { method: "DELETE" });
      say("Deleted.");
      if (location.pathname === `/c/${item.id}`) location.assign("/");
      else await load(true);
    } catch (error) {
      say(error.message, "error");
    }
  }

  async function changed(id) {
    await load(true);
    document.dispatchEvent(new CustomEvent("studio:conversation-changed", { detail: { id } }));
  }

  search.addEventListener("input", () => {
    clearTimeout(state.timer);
    state.timer = setTimeout(() => load(true), 250);
  });
  archived.addEventListener("change", () => load(true));
  more.addEventListener("click", () => load(false));
  document.addEventListener("studio:conversations", () => load(true));

  const aside = el(
    "aside",
    { class: "sidebar", "aria-label": "Conversations" },
    el("h2", {}, "Conversations"),
    el("label", { for: "conversation-search" }, "Search conversations"),
    search,
    el("p", { class: "archived-toggle" }, archived, el("label", { for: "conversation-archived" }, " Archived")),
    list,
    more,
  );
  main.before(aside);
  document.body.classList.add("with-sidebar");
  load(true);
}

/** The group a conversation last answered at `time` is listed under. */
function dayGroup(time) {
  const day = new Date(time);
  const today = new Date();
  today.setHours(0, 0, 0, 0);
  const days = Math.floor((today - new Date(day.getFullYear(), day.getMonth(), day.getDate())) / 86_400_000);
  if (days <= 0) return "Today";
  if (days === 1) return "Yesterday";
  if (days < 7) return "Previous 7 days";
  return day.toLocaleDateString(undefined, { year: "numeric", month: "long" });
}
