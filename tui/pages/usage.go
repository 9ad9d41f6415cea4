package pages

import (
	"context"
	"math/big"
	"strings"

	"github.com/tollgatehq/tollgate/client"
)

// usageMeters bounds the meters the Customer page shows usage for.
const usageMeters = 8

// usageThisPeriod reads the customer's usage of each meter (the newest
// usageMeters) in the current period, by day, and keeps the meters with any.
func usageThisPeriod(ctx context.Context, c *client.Client, customerID string) ([]*client.UsageSummary, error) {
	ms, err := c.ListMeters(ctx, client.ListParams{Limit: usageMeters})
	if err != nil {
		return nil, err
	}
	var out []*client.UsageSummary
	for _, m := range ms.Data {
		u, err := c.GetUsage(ctx, customerID, client.UsageParams{Meter: m.ID, Window: "day"})
		if err != nil {
			return nil, err
		}
		if u.Value != "0" || hasUsage(u.Windows) {
			out = append(out, u)
		}
	}
	return out, nil
}

func hasUsage(ws []client.UsageWindow) bool {
	for _, w := range ws {
		if w.Value != "0" {
			return true
		}
	}
	return false
}

// sparks are the eight heights of a sparkline, lowest first.
var sparks = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws one character per window, as high as its value relative
// to the largest; a window with none is the lowest. Integer arithmetic:
// values may exceed a float's exact range.
func Sparkline(ws []client.UsageWindow) string {
	vals := make([]*big.Int, len(ws))
	peak := new(big.Int)
	for i, w := range ws {
		v, ok := new(big.Int).SetString(w.Value, 10)
		if !ok || v.Sign() < 0 {
			v = new(big.Int)
		}
		vals[i] = v
		if v.Cmp(peak) > 0 {
			peak = v
		}
	}
	var b strings.Builder
	top := big.NewInt(int64(len(sparks) - 1))
	for _, v := range vals {
		h := 0
		if peak.Sign() > 0 && v.Sign() > 0 {
			q := new(big.Int).Mul(v, top)
			h = max(int(q.Quo(q, peak).Int64()), 1)
		}
		b.WriteRune(sparks[h])
	}
	return b.String()
}
