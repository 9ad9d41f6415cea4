// Package migrations embeds the numbered, forward-only SQL migrations that
// `tollgate serve` and `tollgate migrate` apply.
package migrations

import "embed"

// FS holds NNN_name.sql files.
//
//go:embed *.sql
var FS embed.FS
