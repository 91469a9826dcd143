// The owner's panel of public snapshots on a conversation's page: publish the turns as they
// are now at an address anyone can read without signing in, copy it (shown once), and revoke
// any snapshot published before. Shown while the workspace allows public snapshots.

import { api, el, path, say } from "./common.js";
import { copyButton } from "./markdown.js";

/** The panel for conversation `id`. */
export function snapshotsPanel(id) {
  const panel = el("section", { class: "snapshots", "aria-label": "Public snapshots" });
  let fresh = null;
  const fill = async () => {
    const kept = await api(path`/conversations/${id}/snapshots`).catch(() => []);
    const publish = el("button", { type: "button", onclick: () => publishIt() }, "Publish a snapshot");
    const address = fresh ? new URL(fresh, location.origin).href : null;
    const linkRow = address
      ? el("p", {}, el("input", { type: "text", readonly: true, value: address, "aria-label": "Snapshot address", class: "share-address" }), " ", copyButton(() => address, "Copy address"))
      : null;
    const listed = kept.length
      ? el(
          "ul",
          { class: "snapshot-list" },
          kept.map((snapshot) =>
            el(
              "li",
              {},
              `Published ${new Date(snapshot.created_at).toLocaleString()}, ${snapshot.turns} turn${snapshot.turns === 1 ? "" : "s"} `,
              el("button", { type: "button", class: "danger", onclick: () => revoke(snapshot) }, "Revoke"),
            ),
          ),
        )
      : el("p", { class: "help" }, "None yet. A snapshot shows the turns as they are when you publish it, to anyone with its address, without signing in; hidden values stay hidden.");
    panel.replaceChildren(el("h2", {}, "Public snapshots"), publish, linkRow ?? "", listed);
  };
  const publishIt = async () => {
    try {
      const published = await api(path`/conversations/${id}/snapshots`, { method: "POST" });
      fresh = published.url;
      await fill();
      say("Published: copy the address now, it is shown once. Anyone with it can read the snapshot.");
    } catch (error) {
      say(error.message, "error");
    }
  };
  const revoke = async (snapshot) => {
    try {
      await api(path`/conversations/${id}/snapshots/${snapshot.id}`, { method: "DELETE" });
      fresh = null;
      await fill();
      say("Revoked: its address shows nothing any more.");
    } catch (error) {
      say(error.message, "error");
    }
  };
  fill();
  return panel;
}
