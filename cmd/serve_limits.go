package cmd

import (
	"github.com/spf13/pflag"

	"github.com/tollgatehq/tollgate/daemon"
)

// The serve flags that bound what one caller can take of the daemon
// (tollgate help operations, "Limits"). Defaults come from
// daemon.Defaults, so the flag's help and the daemon agree.
func limitFlags(fl *pflag.FlagSet) {
	d := daemon.Defaults()
	fl.Int("mcp-max-batch", d.MCPMaxBatch, "most messages in one JSON-RPC batch on /api/mcp (batches exist only at MCP revision 2025-03-26 and older)")
	fl.Int("mcp-max-response-bytes", d.MCPMaxResponseBytes, "largest answer to one JSON-RPC batch on /api/mcp, in bytes")
}

// limitConfig reads the limit flags into cfg.
func (f *Factory) limitConfig(cfg *daemon.Config) error {
	if cfg.MCPMaxBatch = f.v.GetInt("mcp_max_batch"); cfg.MCPMaxBatch < 1 {
		return usageError("--mcp-max-batch must be at least 1")
	}
	if cfg.MCPMaxResponseBytes = f.v.GetInt("mcp_max_response_bytes"); cfg.MCPMaxResponseBytes < 4096 {
		return usageError("--mcp-max-response-bytes must be at least 4096")
	}
	return nil
}
