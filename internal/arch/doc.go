// Package arch has no code: its tests keep the module's layering and
// contracts honest: domain packages never import HTTP
// handlers, cobra, viper or bubbletea; client/ imports nothing internal; the
// TUI talks to the daemon only through client/; every error code has its
// HTTP status and a client constant.
package arch
