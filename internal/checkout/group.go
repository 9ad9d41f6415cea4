package checkout

import (
	"github.com/tollgatehq/tollgate/internal/batch"
	"github.com/tollgatehq/tollgate/internal/store"
)

// On this machine's disks a commit's flush is milliseconds and PostgreSQL
// groups only the commits already waiting when a flush starts; a checkout
// under load spent most of its time waiting for WALWrite. So payments and
// activations are group-committed (package batch).

// Writers is what the checkouts of one pool share: the group commits of
// invoice payments and plan checkouts, and the plan cache. The daemon makes
// one with NewWriters and keeps it in its Env; an Env without one pays on
// the locked path.
type Writers struct {
	pays        *batch.Group[payWrite, payResult]
	activations *batch.Group[activationWrite, activationResult]
	plans       *planCache
}

// NewWriters returns the Writers of db.
func NewWriters(db *store.DB) *Writers {
	return &Writers{
		pays:        batch.New(func(calls []*batch.Call[payWrite, payResult]) { runPays(db, calls) }, 0, 0),
		activations: batch.New(func(calls []*batch.Call[activationWrite, activationResult]) { runActivations(db, calls) }, 0, 0),
		plans:       &planCache{plans: map[string]planTerms{}},
	}
}
