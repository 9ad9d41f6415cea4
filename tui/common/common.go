package common

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/client"
)

// Common is what the frame hands every page: the API client, the context
// that ends when the UI quits, styles, keys and the size of the page's area.
type Common struct {
	Ctx    context.Context
	Client *client.Client
	Styles *Styles
	Keys   KeyMap
	// Now is the clock (tests fix it).
	Now func() time.Time
	// Live is true for a live-mode key (sk_live_…).
	Live bool
}
