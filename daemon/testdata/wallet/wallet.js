// The browser test's wallet: bundled by esbuild (bundle.mjs) into one
// script the test injects before the page's own, exposing the signers.
import { signers } from "./signers.mjs";

window.tollgateSigners = signers;
