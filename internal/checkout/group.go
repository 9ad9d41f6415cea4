package checkout

import (
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
)

// Writers is what the checkouts of one pool share: the group commits of
// invoice payments and plan checkouts (each its noun's: payments and
// subscriptions write their rows), and the plan cache. The daemon makes one
// with NewWriters and keeps it in its Env; an Env without one pays on the
// locked path.
type Writers struct {
	pays        *payments.InvoicePayments
	activations *subscriptions.Activations
	plans       *planCache
}

// NewWriters returns the Writers of db.
func NewWriters(db *store.DB) *Writers {
	return &Writers{
		pays:        payments.NewInvoicePayments(db),
		activations: subscriptions.NewActivations(db),
		plans:       &planCache{plans: map[string]planTerms{}},
	}
}
