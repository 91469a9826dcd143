// A conversation's own page (`/c/ID`): its whole thread as kept, opened where it stopped, and
// (for its owner) the box to ask the next turn. Reloading it, or coming back from the sidebar,
// shows the same thread.

import { ApiError, api, dollars, el, header, path, say, withCode } from "./common.js";
import { followUps, transcriptView } from "./thread.js";

const main = document.getElementById("main");
const id = decodeURIComponent(location.pathname.split("/").pop());

async function show() {
  const caller = await header();
  if (!caller) {
    const signIn = el("a", { href: `/signin?next=${encodeURIComponent(location.pathname)}` }, "Sign in");
    main.replaceChildren(el("h1", {}, "Conversation"), el("p", {}, signIn, " to read your conversations."));
    return;
  }
  let kept;
  try {
    kept = await api(path`/conversations/${id}`);
  } catch (error) {
    main.replaceChildren(
      el("h1", {}, error instanceof ApiError && error.status === 404 ? "No such conversation" : "Conversation"),
      el("p", {}, ...withCode(error.message)),
      el("p", {}, el("a", { href: "/" }, "Run a tool from the gallery"), " to start one."),
    );
    return;
  }
  document.title = `${kept.title} · llmtool studio`;
  const title = el("h1", {}, kept.title);
  document.addEventListener("studio:conversation-changed", async (event) => {
    if (event.detail?.id !== id) return;
    const now = await api(path`/conversations/${id}`).catch(() => null);
    if (now) {
      title.textContent = now.title;
      document.title = `${now.title} · llmtool studio`;
    }
  });
  const facts = el(
    "p",
    { class: "facts" },
    el("a", { href: path`/t/${kept.slug}?version=${kept.version}` }, `${kept.slug} v${kept.version}`),
    ` · ${kept.provider}/${kept.model} · ${kept.turns} turn${kept.turns === 1 ? "" : "s"} · ${dollars(kept.cost_usd)}`,
    kept.archived ? " · archived" : "",
  );
  const thread = el("section", { class: "thread", "aria-label": "Turns" }, ...transcriptView(kept.messages, kept.first_answer));
  main.replaceChildren(title, facts, thread);
  // Its owner goes on where it stopped; anyone else who may read it (an admin) reads only.
  if (kept.values_shown) {
    const pictures = kept.messages.some((message) => message.pictures?.length);
    followUps(main, id, { askable: !pictures });
    document.getElementById("follow-up")?.focus();
  }
  say("");
}

show();
