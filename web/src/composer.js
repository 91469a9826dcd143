// The box under a conversation's thread that asks its next turn: the question (Enter sends,
// Shift+Enter breaks the line), the model to ask it of (any a run could pick; the turn before's
// by default), Stop while an answer streams (the turn is kept as cancelled), Retry on a turn
// asked (its question again, as a new turn), and a share link.

import { ApiError, api, el, path, say, streamRun, withCode } from "./common.js";
import { copyButton } from "./markdown.js";
import { answerView, askedView, factsOf, retryButton, warningsBanner } from "./thread.js";

let offered = null;

/** The models a run may pick here (`GET /models`), read once a page. */
function models() {
  offered ??= api("/models").catch(() => []);
  return offered;
}

/**
 * The follow-ups of conversation `id` under its thread, in `into`: the turns asked here, the
 * composer (unless not `askable`: an image tool's run has no follow-ups) with `model` (the
 * `provider/model` of the turn before) picked, and a button that makes a share link. Gives
 * `ask(text)`, which asks `text` as the next turn (what Retry does).
 */
export function followUps(into, id, { askable = true, model = "" } = {}) {
  const turns = el("div", { class: "turns" });
  const box = el("textarea", { id: "follow-up", rows: 2, required: true, "aria-describedby": "follow-up-help" });
  const picker = el("select", { id: "follow-up-model" }, el("option", { value: "" }, "The conversation's model"));
  const send = el("button", { type: "submit" }, "Ask");
  const stop = el("button", { type: "button", class: "secondary", hidden: true }, "Stop");
  let running = null;
  models().then((offered) => {
    picker.append(...offered.filter((m) => m.ready).map((m) => el("option", { value: m.id }, m.id)));
    if (offered.some((m) => m.id === model)) picker.value = model;
  });
  const ask = async (text) => {
    if (running) return;
    running = new AbortController();
    send.disabled = true;
    stop.hidden = false;
    const chosen = picker.value || undefined;
    await askFollowUp(turns, id, { text, model: chosen }, running.signal, ask);
    running = null;
    send.disabled = false;
    stop.hidden = true;
    box.focus();
  };
  stop.addEventListener("click", () => running?.abort());
  box.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  const form = el(
    "form",
    {
      class: "follow-up",
      onsubmit: async (event) => {
        event.preventDefault();
        const text = box.value.trim();
        if (!text) return;
        box.value = "";
        await ask(text);
      },
    },
    el("label", { for: "follow-up" }, "Ask a follow-up"),
    box,
    el("p", { id: "follow-up-help", class: "help" }, "Enter asks; Shift+Enter starts a new line."),
    el("div", { class: "form-row" }, el("div", { class: "field" }, el("label", { for: "follow-up-model" }, "Model for the next turn"), picker), el("div", { class: "field" }, send, " ", stop)),
  );
  const shared = el("p", { class: "share-link" });
  const share = el("button", { type: "button", class: "secondary", onclick: () => makeLink(id, shared) }, "Share");
  into.append(el("section", { class: "thread", "aria-label": "Follow-ups" }, turns, askable ? form : null, el("div", { class: "share" }, share, shared)));
  return { ask };
}

/**
 * Asks `question` (its text, and the model if not the conversation's) in conversation `id`,
 * its turn added to `turns` as it streams; `signal` stops it. The turn then has Retry, which
 * gives its text to `again`.
 */
async function askFollowUp(turns, id, question, signal, again) {
  const answer = answerView();
  const turn = el("article", { class: "turn" }, askedView(question.text), answer.element);
  turns.append(turn);
  const started = performance.now();
  try {
    await streamRun(path`/api/v1/conversations/${id}/messages`, question, (name, data) => {
      if (name === "start") {
        if (data.warnings?.length) turn.insertBefore(warningsBanner(data.warnings), answer.element);
        if (data.notices?.length) say(data.notices.join(" "));
        answer.facts.textContent = `Running on ${data.provider}/${data.model}…`;
      }
      if (name === "text") answer.append(data.text);
      if (name === "call") answer.called(data);
      if (name === "result") answer.returned(data);
      if (name === "done") {
        answer.finish(data.answer);
        say(`The follow-up on ${data.provider}/${data.model} ended: ${data.outcome}.`);
        answer.facts.replaceChildren(...factsOf(data, Math.round(performance.now() - started)));
        document.dispatchEvent(new Event("studio:conversations"));
      }
    }, { signal });
  } catch (error) {
    answer.finish(null);
    const stopped = error.name === "AbortError";
    const said = stopped ? "Stopped: the turn is kept as cancelled." : error instanceof ApiError ? error.message : `The follow-up stopped: ${error.message}`;
    answer.facts.replaceChildren(...withCode(said));
    answer.facts.classList.toggle("problem", !stopped);
    say(stopped ? "Stopped." : said, stopped ? "info" : "error");
  }
  answer.tools.append(retryButton(question.text, again));
}

/** Makes a share link of conversation `id`, shown in `into` with a button that copies it. */
async function makeLink(id, into) {
  try {
    const link = await api(path`/conversations/${id}/share`, { method: "POST" });
    const address = new URL(link.url, location.origin).href;
    const field = el("input", { type: "text", readonly: true, value: address, "aria-label": "Share link", class: "share-address" });
    into.replaceChildren(field, " ", copyButton(() => address, "Copy link"), el("span", { class: "help" }, ` A snapshot of ${link.turns} turn(s), for members who may see this tool.`));
    say("The share link is ready.");
  } catch (error) {
    say(error.message, "error");
  }
}
