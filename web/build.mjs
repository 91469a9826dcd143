// Builds the studio's static assets into crates/llmtool-studio/assets/, which the binary
// embeds: each page's script bundled and minified by esbuild (CodeMirror only in the
// editor's), the pages and the stylesheet copied. `--check` builds into a scratch folder and
// fails when the committed assets differ, so a stale bundle never ships.

import { build } from "esbuild";
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const committed = join(here, "..", "crates", "llmtool-studio", "assets");
const checking = process.argv.includes("--check");
const out = checking ? await mkdtemp(join(tmpdir(), "llmtool-studio-")) : committed;

if (!checking) await rm(out, { recursive: true, force: true });
const result = await build({
  metafile: true,
  entryPoints: ["gallery", "tool", "editor", "signin", "invite", "people", "teams", "integrations", "prices", "spend", "budgets", "audit", "share", "conversation", "join", "snapshot", "tokens", "device", "curate"].map((page) => join(here, "src", `${page}.js`)),
  outdir: out,
  bundle: true,
  format: "esm",
  minify: true,
  target: "es2022",
  legalComments: "none",
  logLevel: "warning",
});
for (const page of await readdir(join(here, "pages"))) {
  await cp(join(here, "pages", page), join(out, page));
}
await cp(join(here, "src", "studio.css"), join(out, "studio.css"));
await writeFile(join(out, "THIRD-PARTY-LICENSES.txt"), await licenses(result.metafile));

/** The licences of the npm packages bundled into the scripts, for their notices. */
async function licenses(metafile) {
  const packages = new Set();
  for (const input of Object.keys(metafile.inputs)) {
    const match = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
    if (match) packages.add(match[1]);
  }
  const parts = ["Third-party code bundled into the llmtool studio's scripts, with its licence.\n"];
  for (const name of [...packages].sort()) {
    const folder = join(here, "node_modules", name);
    const manifest = JSON.parse(await readFile(join(folder, "package.json"), "utf8"));
    const files = (await readdir(folder)).filter((file) => /^(licen[cs]e|copying)/i.test(file));
    const text = files.length ? await readFile(join(folder, files[0]), "utf8") : `${manifest.license}\n`;
    parts.push(`${"=".repeat(72)}\n${name} ${manifest.version} (${manifest.license})\n${"=".repeat(72)}\n${text.trim()}\n`);
  }
  return parts.join("\n");
}

if (checking) {
  const built = (await readdir(out)).sort();
  const kept = (await readdir(committed).catch(() => [])).sort();
  const stale = [];
  for (const name of new Set([...built, ...kept])) {
    const a = await readFile(join(out, name)).catch(() => null);
    const b = await readFile(join(committed, name)).catch(() => null);
    if (!a || !b || !a.equals(b)) stale.push(name);
  }
  await rm(out, { recursive: true, force: true });
  if (stale.length) {
    console.error(`the committed studio assets are stale (${stale.join(", ")}): run \`node web/build.mjs\` and commit crates/llmtool-studio/assets/`);
    process.exit(1);
  }
  console.log(`the studio assets are up to date (${built.length} files)`);
}
