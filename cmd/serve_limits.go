package cmd

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/tollgatehq/tollgate/daemon"
)

// The serve flags that bound what one caller can take of the daemon
// (tollgate help operations, "Limits"). Defaults come from
// daemon.Defaults, so the flag's help and the daemon agree.
func limitFlags(fl *pflag.FlagSet) {
	d := daemon.Defaults()
	fl.Int("mcp-max-batch", d.MCPMaxBatch, "most messages in one JSON-RPC batch on /api/mcp (batches exist only at MCP revision 2025-03-26 and older)")
	fl.Int("max-connections", d.MaxConnections, "most open HTTP connections (kept below the process's file-handle limit); past it, the longest-waiting idle one is closed")
	fl.Int("max-connections-per-ip", d.MaxConnectionsPerIP, "most open HTTP connections from one peer address")
	fl.Duration("idle-timeout", d.IdleTimeout, "how long a keep-alive connection may wait for its next request")
	fl.StringSlice("mcp-allowed-origins", nil, "browser origins allowed on /api/mcp besides the base URL's own (and loopback ones when the base URL is loopback), comma separated, e.g. https://app.example.com")
	fl.Int("mcp-max-response-bytes", d.MCPMaxResponseBytes, "largest answer to one JSON-RPC batch on /api/mcp, in bytes")
}

// limitConfig reads the limit flags into cfg.
func (f *Factory) limitConfig(cfg *daemon.Config) error {
	if cfg.MaxConnections = f.v.GetInt("max_connections"); cfg.MaxConnections < 64 {
		return usageError("--max-connections must be at least 64")
	}
	if cfg.MaxConnectionsPerIP = f.v.GetInt("max_connections_per_ip"); cfg.MaxConnectionsPerIP < 1 {
		return usageError("--max-connections-per-ip must be at least 1")
	}
	if cfg.IdleTimeout = f.v.GetDuration("idle_timeout"); cfg.IdleTimeout <= 0 {
		return usageError("--idle-timeout must be positive")
	}
	cfg.MCPAllowedOrigins = f.v.GetStringSlice("mcp_allowed_origins")
	for _, o := range cfg.MCPAllowedOrigins {
		if !strings.HasPrefix(o, "http://") && !strings.HasPrefix(o, "https://") {
			return usageError("--mcp-allowed-origins: %q is not an origin such as https://app.example.com", o)
		}
	}
	if cfg.MCPMaxBatch = f.v.GetInt("mcp_max_batch"); cfg.MCPMaxBatch < 1 {
		return usageError("--mcp-max-batch must be at least 1")
	}
	if cfg.MCPMaxResponseBytes = f.v.GetInt("mcp_max_response_bytes"); cfg.MCPMaxResponseBytes < 4096 {
		return usageError("--mcp-max-response-bytes must be at least 4096")
	}
	return nil
}
