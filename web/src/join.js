// Joining a conversation by its collaboration link (`/c/join#TOKEN`): the token is read from
// the fragment (never in the page's address or a Referer), kept across signing in, and sent
// once in a POST when the signed-in member clicks Join; then the conversation's page opens.

import { api, el, header, path } from "./common.js";

const main = document.getElementById("main");
const KEPT = "llmtool-collaboration-link";

async function join() {
  const fromLink = location.hash.slice(1);
  if (fromLink) {
    sessionStorage.setItem(KEPT, fromLink);
    // Out of the address bar and the history: the token is a key.
    history.replaceState(null, "", "/c/join");
  }
  const token = sessionStorage.getItem(KEPT);
  const caller = await header();
  if (!token) {
    main.replaceChildren(el("h1", {}, "Join a conversation"), el("p", {}, "This address holds no collaboration link: open the link you were given."));
    return;
  }
  if (!caller) {
    const signIn = el("a", { href: `/signin?next=${encodeURIComponent("/c/join")}` }, "Sign in");
    main.replaceChildren(el("h1", {}, "Join a conversation"), el("p", {}, signIn, " to join this conversation: it is open to the library's members."));
    return;
  }
  // Joining takes the member's own click: a link opened by mistake joins nobody.
  const button = el("button", { type: "button", onclick: () => joinBy(token) }, "Join this conversation");
  main.replaceChildren(
    el("h1", {}, "Join a conversation"),
    el("p", {}, "A member opened one of their conversations to collaborators. Once you join, you read it and add turns, and its owner and other collaborators see what you ask."),
    button,
  );
  button.focus();
}

/** Joins by the link's `token`, then opens the conversation. */
async function joinBy(token) {
  main.replaceChildren(el("h1", {}, "Join a conversation"), el("p", {}, "Joining…"));
  try {
    const joined = await api(path`/collaborate/${token}`, { method: "POST" });
    sessionStorage.removeItem(KEPT);
    location.replace(joined.url);
  } catch {
    sessionStorage.removeItem(KEPT);
    main.replaceChildren(
      el("h1", {}, "Join a conversation"),
      el("p", {}, "This link joins nothing: its owner turned collaboration off, or its tool is not one you may see."),
      el("p", {}, el("a", { href: "/" }, "Back to the gallery")),
    );
  }
}

join();
