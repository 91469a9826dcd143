// The owner's Slack panel on a conversation's page, shown while the server answers Slack:
// connect the conversation to a channel the app is in (its turns are posted there in a
// thread, then each new one, and a mention of the app in that thread is a turn of it), see how
// far the posting has got (and why it waits, when Slack could not take it), and disconnect it.

import { ApiError, api, el, path, say, withCode } from "./common.js";

/** The panel for conversation `id`. */
export function slackPanel(id) {
  const panel = el("section", { class: "slack", "aria-label": "Slack" });
  const fill = async () => {
    const sync = await api(path`/conversations/${id}/slack`).catch((error) => {
      if (error instanceof ApiError && error.status === 404) return null;
      throw error;
    });
    if (sync) return connected(sync);
    const pick = el("button", { type: "button", onclick: () => choose(pick) }, "Connect to a Slack channel");
    panel.replaceChildren(el("h2", {}, "Slack"), el("p", { class: "help" }, "Post this conversation in a channel: its turns so far, then each new one. A mention of the app in its thread is a turn of it."), pick);
  };
  const connected = (sync) => {
    const progress = sync.thread_ts ? `${sync.posted} turn${sync.posted === 1 ? "" : "s"} posted` : "being posted";
    const waiting = sync.last_error ? el("p", { class: "help", role: "note" }, ...withCode(`Slack could not take the last message (${sync.last_error}); the posting goes on by itself, in order.`)) : "";
    const stop = el("button", { type: "button", class: "danger", onclick: () => disconnect() }, "Disconnect");
    panel.replaceChildren(el("h2", {}, "Slack"), el("p", {}, `Connected to the channel ${sync.channel}: ${progress}.`), waiting, stop);
  };
  const choose = async (button) => {
    button.disabled = true;
    try {
      const channels = await api("/slack/channels");
      if (!channels.length) {
        say("The app is in no channel yet: invite it to one in Slack (`/invite @llmtool`).", "error");
        button.disabled = false;
        return;
      }
      const list = el("select", { id: "slack-channel" }, channels.map((channel) => el("option", { value: channel.id }, `#${channel.name}`)));
      const go = el("button", { type: "submit" }, "Connect");
      const form = el("form", { class: "form-row" }, el("div", { class: "field" }, el("label", { for: "slack-channel" }, "Channel"), list), el("div", { class: "field" }, go));
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        try {
          const sync = await api(path`/conversations/${id}/slack`, { method: "PUT", json: { channel: list.value } });
          say(`Connected to ${list.selectedOptions[0].textContent}: the turns are being posted.`);
          connected(sync);
        } catch (error) {
          say(error.message, "error");
        }
      });
      button.replaceWith(form);
      list.focus();
    } catch (error) {
      say(error.message, "error");
      button.disabled = false;
    }
  };
  const disconnect = async () => {
    try {
      await api(path`/conversations/${id}/slack`, { method: "DELETE" });
      say("Disconnected: nothing more is posted, and a mention in its thread is no turn of it.");
      await fill();
    } catch (error) {
      say(error.message, "error");
    }
  };
  fill().catch((error) => say(error.message, "error"));
  return panel;
}
