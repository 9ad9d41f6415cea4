// A signing service for the Go tests: one JSON request a line on stdin,
// {"id", "signer": "ethers"|"viem", "key": "0x…", "typed": {…}}, one answer
// a line on stdout, {"id", "signature"} or {"id", "error"}.
import { createInterface } from "node:readline";
import { signers } from "./signers.mjs";

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  let req = {};
  try {
    req = JSON.parse(line);
    const sign = signers[req.signer];
    if (!sign) throw new Error("unknown signer " + req.signer);
    const signature = await sign(req.key, req.typed);
    process.stdout.write(JSON.stringify({ id: req.id, signature }) + "\n");
  } catch (e) {
    process.stdout.write(JSON.stringify({ id: req.id, error: String((e && e.shortMessage) || (e && e.message) || e) }) + "\n");
  }
}
