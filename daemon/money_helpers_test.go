package daemon_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// money is a test merchant with a client, for the money path's tests.
type moneyFixture struct {
	*bundle
	c   *client.Client
	key string
	m   string
	ctx context.Context
}

func setupMoney(t testing.TB, opts ...func(*daemon.Config)) *moneyFixture {
	t.Helper()
	b := setup(t, opts...)
	m := b.merchant("Acme Widgets")
	_, key := b.key(m, tenant.Test)
	return &moneyFixture{bundle: b, c: b.client(key), key: key, m: m, ctx: context.Background()}
}

func (f *moneyFixture) plan(p client.PlanParams) *client.Plan {
	f.t.Helper()
	pl, err := f.c.CreatePlan(f.ctx, p)
	if err != nil {
		f.t.Fatal(err)
	}
	return pl
}

func (f *moneyFixture) subscribe(planID, payer, ext string) *client.Subscription {
	f.t.Helper()
	res, err := f.c.Pay(f.ctx, planID, client.CheckoutParams{Payer: payer, ExternalCustomerID: ext})
	if err != nil {
		f.t.Fatal(err)
	}
	return res.Subscription
}

func (f *moneyFixture) advance(by string) {
	f.t.Helper()
	if _, err := f.c.AdvanceTestClock(f.ctx, client.TestClockAdvanceParams{By: by}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *moneyFixture) sub(id string) *client.Subscription {
	f.t.Helper()
	x, err := f.c.GetSubscription(f.ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return x
}

// eventTypes returns the merchant's event types, oldest first.
func (f *moneyFixture) eventTypes() []string {
	f.t.Helper()
	page, err := f.c.ListEvents(f.ctx, client.ListParams{Limit: 100})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for i := len(page.Data) - 1; i >= 0; i-- {
		out = append(out, page.Data[i].Type)
	}
	return out
}

// cancelAts are the cancel_at of the subscription.updated events of
// subscription subID, oldest first ("null" for none).
func (f *moneyFixture) cancelAts(subID string) []string {
	f.t.Helper()
	page, err := f.c.ListEvents(f.ctx, client.ListParams{Limit: 100})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for i := len(page.Data) - 1; i >= 0; i-- {
		e := page.Data[i]
		var x struct {
			ID       string     `json:"id"`
			CancelAt *time.Time `json:"cancel_at"`
		}
		if err := json.Unmarshal(e.Data, &x); err != nil {
			f.t.Fatal(err)
		}
		if e.Type != "subscription.updated" || x.ID != subID {
			continue
		}
		if x.CancelAt == nil {
			out = append(out, "null")
		} else {
			out = append(out, x.CancelAt.UTC().Format(time.RFC3339))
		}
	}
	return out
}

func count(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}

func asErr(err error, target **client.Error) bool {
	e, ok := err.(*client.Error)
	if ok {
		*target = e
	}
	return ok
}

func ptrInt(v int) *int { return &v }
