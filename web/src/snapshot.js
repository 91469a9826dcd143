// A public snapshot (`/s/TOKEN`): a conversation's turns as its owner published them, for
// anyone with the address, signed in or not. It names no member; the values data-loss
// prevention hid show as their placeholders.

import { el, path, say } from "./common.js";
import { transcriptView } from "./thread.js";

const main = document.getElementById("main");
const token = decodeURIComponent(location.pathname.split("/").pop());

async function show() {
  document.querySelector("header").replaceChildren(el("a", { href: "/", class: "brand" }, "llmtool studio"));
  // Read without credentials: the snapshot is the same for everyone.
  const response = await fetch(path`/api/v1/snapshots/${token}`, { credentials: "omit" }).catch(() => null);
  if (!response?.ok) {
    main.replaceChildren(el("h1", {}, "No such snapshot"), el("p", {}, "This address shows nothing: the snapshot was revoked, or never was."));
    say("");
    return;
  }
  const snapshot = await response.json();
  document.title = `${snapshot.title} · llmtool studio`;
  const published = new Date(snapshot.published_at);
  main.replaceChildren(
    el("h1", {}, snapshot.title),
    el(
      "p",
      { class: "facts" },
      `${snapshot.tool} v${snapshot.version} · ${snapshot.messages.length} turn${snapshot.messages.length === 1 ? "" : "s"} · shared publicly on `,
      el("time", { datetime: snapshot.published_at }, published.toLocaleDateString()),
      " · read-only",
    ),
    el("section", { class: "thread", "aria-label": "Turns" }, ...transcriptView(snapshot.messages, snapshot.first_answer)),
  );
  say("");
}

show();
