// The browser test's wallet: bundled by esbuild (bundle.mjs) into one
// script the test injects before the page's own, exposing the signers.
import { signers, personal } from "./signers.mjs";

window.tollgateSigners = signers;
window.tollgatePersonal = personal;
