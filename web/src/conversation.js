// A conversation's own page (`/c/ID`): its whole thread as kept, opened where it stopped, and
// (for its owner) the box to ask the next turn. Reloading it, or coming back from the sidebar,
// shows the same thread.

import { ApiError, api, dollars, el, header, path, say, withCode } from "./common.js";
import { copyButton } from "./markdown.js";
import { followUps } from "./composer.js";
import { slackPanel } from "./slack-connect.js";
import { snapshotsPanel } from "./snapshots.js";
import { transcriptView } from "./thread.js";

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
  // Its owner and collaborators go on where it stopped (and may ask a turn again); anyone
  // else who may read it (an admin) reads only.
  const asks = kept.role === "owner" || kept.role === "collaborator";
  let composer = null;
  const retry = asks ? (text) => composer?.ask(text) : null;
  const thread = el("section", { class: "thread", "aria-label": "Turns" }, ...transcriptView(kept.messages, kept.first_answer, { retry }));
  main.replaceChildren(title, facts, thread);
  if (kept.role === "owner") main.append(collaborationPanel(kept));
  if (kept.role === "owner" && caller.public_snapshots) main.append(snapshotsPanel(id));
  if (kept.role === "owner" && caller.slack) main.append(slackPanel(id));
  if (kept.role === "collaborator") {
    const leave = el("button", { type: "button", class: "danger", onclick: () => leaveIt() }, "Leave this conversation");
    main.append(el("section", { class: "collaboration", "aria-label": "Collaboration" }, el("p", { class: "help" }, "You collaborate on this conversation: you read it and add turns."), leave));
  }
  if (asks) {
    const pictures = kept.messages.some((message) => message.pictures?.length);
    const last = kept.messages.at(-1);
    const model = last ? `${last.provider}/${last.model}` : "";
    composer = followUps(main, id, { askable: !pictures, model });
    document.getElementById("follow-up")?.focus();
  }
  say("");
}

/** The owner's panel: collaboration on or off, its link to copy, and who joined. */
function collaborationPanel(kept) {
  const panel = el("section", { class: "collaboration", "aria-label": "Collaboration" });
  const fill = (open, link) => {
    const toggle = open
      ? el("button", { type: "button", class: "danger", onclick: () => turn(false) }, "Turn collaboration off")
      : el("button", { type: "button", onclick: () => turn(true) }, "Turn collaboration on");
    const address = link ? new URL(link, location.origin).href : null;
    const linkRow = address
      ? el("p", {}, el("input", { type: "text", readonly: true, value: address, "aria-label": "Collaboration link", class: "share-address" }), " ", copyButton(() => address, "Copy link"))
      : open
        ? el("p", { class: "help" }, "Collaboration is on. Turn it off and on again for a new link (the old one then joins nobody).")
        : el("p", { class: "help" }, "Members you give the link to can read this conversation and add turns.");
    const people = kept.collaborators.length
      ? el(
          "ul",
          { class: "collaborators" },
          kept.collaborators.map((person) =>
            el("li", {}, `${person.name || "A member"} `, el("button", { type: "button", class: "danger", onclick: () => remove(person) }, `Remove ${person.name || "member"}`)),
          ),
        )
      : el("p", { class: "help" }, "No one has joined yet.");
    panel.replaceChildren(el("h2", {}, "Collaboration"), toggle, linkRow, people);
  };
  const turn = async (on) => {
    try {
      if (on) {
        const link = await api(path`/conversations/${id}/collaboration`, { method: "POST" });
        fill(true, link.url);
        say("Collaboration is on: copy the link for the members to join.");
      } else {
        await api(path`/conversations/${id}/collaboration`, { method: "DELETE" });
        kept.collaborators = [];
        fill(false, null);
        say("Collaboration is off: the link joins nobody, and every collaborator lost it.");
      }
    } catch (error) {
      say(error.message, "error");
    }
  };
  const remove = async (person) => {
    try {
      await api(path`/conversations/${id}/collaborators/${person.id}`, { method: "DELETE" });
      kept.collaborators = kept.collaborators.filter((other) => other.id !== person.id);
      fill(kept.collaboration, null);
      say(`${person.name || "The member"} no longer collaborates on this conversation.`);
    } catch (error) {
      say(error.message, "error");
    }
  };
  fill(kept.collaboration, null);
  return panel;
}

/** Leaves the conversation (a collaborator), back to the gallery. */
async function leaveIt() {
  try {
    await api(path`/conversations/${id}/collaborators/me`, { method: "DELETE" });
    location.assign("/");
  } catch (error) {
    say(error.message, "error");
  }
}

show();
