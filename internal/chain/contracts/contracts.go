// Package contracts holds tollgate's Solidity sources (PlanManager, and the
// TestUSDC, TestWallet and FalseToken used by tests), their compiled ABI and bytecode,
// and the abigen v2 bindings generated from them. Everything here is
// committed: building needs neither node nor abigen.
package contracts

//go:generate sh -c "npm ci --no-audit --no-fund --silent && node compile.js"
