// Prints wallet.js bundled for the browser (one IIFE, no imports left).
import { buildSync } from "esbuild";

const out = buildSync({
  entryPoints: [new URL("./wallet.js", import.meta.url).pathname],
  bundle: true,
  format: "iife",
  platform: "browser",
  target: "es2020",
  write: false,
  logLevel: "error",
});
process.stdout.write(out.outputFiles[0].text);
