// Compiles the contracts with solc-js (pinned in package-lock.json) through
// standard JSON with a pinned EVM version, writes <Name>.abi and <Name>.bin,
// and generates abigen v2 bindings for each. Run by `go generate` (see
// contracts.go); building and testing the Go code needs neither node nor
// abigen, since every output is committed.
"use strict";

const fs = require("fs");
const path = require("path");
const { execFileSync } = require("child_process");
const solc = require("solc");

// Cancun runs on every chain USDC lives on that tollgate targets; a later
// fork's opcodes would make the bytecode undeployable on a chain lagging behind.
const EVM_VERSION = "cancun";
const SOURCES = ["SignatureChecker.sol", "TestUSDC.sol", "PlanManager.sol", "TestWallet.sol", "FalseToken.sol"];
const CONTRACTS = {
  "TestUSDC.sol": "TestUSDC",
  "PlanManager.sol": "PlanManager",
  "TestWallet.sol": "TestWallet",
  "FalseToken.sol": "FalseToken",
};

const dir = __dirname;
const input = {
  language: "Solidity",
  sources: Object.fromEntries(SOURCES.map((f) => [f, { content: fs.readFileSync(path.join(dir, f), "utf8") }])),
  settings: {
    evmVersion: EVM_VERSION,
    optimizer: { enabled: true, runs: 200 },
    viaIR: false,
    // No metadata hash: the bytecode then depends only on the sources and
    // these settings, so regenerating never churns the committed .bin files.
    metadata: { bytecodeHash: "none", appendCBOR: false },
    outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
  },
};

const output = JSON.parse(solc.compile(JSON.stringify(input)));
let failed = false;
for (const e of output.errors || []) {
  process.stderr.write(e.formattedMessage + "\n");
  if (e.severity === "error") failed = true;
}
if (failed) process.exit(1);

for (const [file, name] of Object.entries(CONTRACTS)) {
  const c = output.contracts[file][name];
  fs.writeFileSync(path.join(dir, name + ".abi"), JSON.stringify(c.abi, null, 2) + "\n");
  fs.writeFileSync(path.join(dir, name + ".bin"), c.evm.bytecode.object + "\n");
  const out = name.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase() + ".go";
  execFileSync(
    "go",
    ["run", "github.com/ethereum/go-ethereum/cmd/abigen", "--v2", "--abi", name + ".abi", "--bin", name + ".bin",
      "--pkg", "contracts", "--type", name, "--out", out],
    { cwd: dir, stdio: "inherit" },
  );
}
process.stderr.write(`compiled with solc ${solc.version()} for ${EVM_VERSION}\n`);
