// Bundles extension.src.js and vscode-languageclient into extension.js, so the packaged
// extension needs no node_modules. `node build.mjs` writes it; the test command then packages
// it with vsce.
import { build } from "esbuild";

await build({
  entryPoints: ["extension.src.js"],
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  external: ["vscode"],
  outfile: "extension.js",
  minify: true,
  logLevel: "warning",
});
