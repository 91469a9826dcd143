// A shared conversation (`/share/TOKEN`): a read-only snapshot of its turns, for the members
// who may see its tool. The values data-loss prevention hid show as their placeholders.

import { ApiError, api, el, header, path, say } from "./common.js";
import { transcriptView } from "./thread.js";

const main = document.getElementById("main");
const token = location.pathname.split("/").pop();

async function show() {
  await header();
  let shared;
  try {
    shared = await api(path`/shared/${token}`);
  } catch (error) {
    const signIn = el("a", { href: `/signin?next=${encodeURIComponent(location.pathname)}` }, "Sign in");
    main.replaceChildren(
      el("h1", {}, "Shared conversation"),
      error instanceof ApiError && error.status === 401
        ? el("p", {}, signIn, " to read this conversation: it is shown to the library's members.")
        : el("p", {}, "This link shows nothing: it was withdrawn, or its tool is not one you may see."),
    );
    return;
  }
  document.title = `${shared.slug} conversation · llmtool studio`;
  main.replaceChildren(
    el("h1", {}, "Shared conversation"),
    el(
      "p",
      { class: "facts" },
      el("a", { href: path`/t/${shared.slug}?version=${shared.version}` }, `${shared.slug} v${shared.version}`),
      ` · ${shared.provider}/${shared.model} · ${shared.turns} turn(s) · shared by ${shared.owner} · read-only`,
    ),
    el("section", { class: "thread", "aria-label": "Turns" }, ...transcriptView(shared.messages, shared.first_answer)),
  );
  say("");
}

show();
