package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// triggerEvents are the events `trigger` makes happen and how, in the
// order its help lists them.
var triggerEvents = [][2]string{
	{"invoice.paid", "an invoice paid with 0x4242…"},
	{"subscription.active", "a plan subscribed to with 0x4242…"},
	{"subscription.renewed", "the same, then the clock moved to the first renewal"},
	{"subscription.payment_failed", "0x…3063 subscribes, and its first renewal fails"},
	{"subscription.dunning_exhausted", "the same, then the clock moved a day at a time until dunning runs out"},
	{"subscription.revoked", "0x…0341 subscribes, and revokes before its first renewal"},
	{"subscription.expired", "a subscription canceled now"},
	{"subscription.updated", "a subscription moved to a smaller plan at its period's end"},
	{"subscription.trial_will_end", "a plan with a 4-day trial subscribed to, then the clock moved a day"},
	{"credit.granted", "5 USDC of credits granted"},
	{"credit.debited", "credits granted, then 1 USDC debited"},
	{"entitlement.granted", "the feature tollgate_trigger granted"},
	{"meter_event.cancelled", "a meter event on the meter tollgate_trigger sent, then cancelled"},
	{"alert.triggered", "a usage alert of 1 on tollgate_trigger, then one event sent"},
}

func triggerEventNames() []string {
	names := make([]string, len(triggerEvents))
	for i, e := range triggerEvents {
		names[i] = e[0]
	}
	return names
}

// How long trigger waits for its event to show in the feed, and how much
// test-clock time it spends waiting for dunning to run out.
const (
	triggerEventWait  = 20 * time.Second
	triggerDunningMax = 200 * 24 * time.Hour
)

func newTriggerCmd(f *Factory) *cobra.Command {
	events := ""
	for _, e := range triggerEvents {
		events += fmt.Sprintf("  %-31s %s\n", e[0], e[1])
	}
	names := triggerEventNames()
	cmd := &cobra.Command{
		Use: "trigger EVENT",
		// Triggers run in test mode only: its key is the test one.
		Annotations: map[string]string{modeAnnotation: string(tenant.Test)},
		Short:       "Make an event really happen in test mode, to test a webhook handler",
		Long: `Make the named event happen in test mode, as a customer and time would: create
what it needs through the API (an invoice, or a plan billed every day),
pay with the magic wallet that leads to it, advance the test clock as far as
needed, or cancel. The event is emitted and delivered to your webhook
endpoints like any other. Prints the objects made and the events they
emitted (from GET /v1/events). Each run uses a new customer.

Events, and what is made for them:
` + events + `
Advancing the test clock moves all of the merchant's test-mode data with it:
other test subscriptions may renew too. subscription.dunning_exhausted
advances a day at a time until every retry of the daemon's dunning schedule
has failed (at most 200 days), with the wallet 0x…0404 whose every charge
after the first fails. A live key is refused.`,
		Example: `  tollgate trigger invoice.paid
  tollgate trigger subscription.renewed --json
  tollgate events tail --forward-to http://localhost:3000/webhooks --secret whsec_… &
  tollgate trigger subscription.payment_failed`,
		Args:      exactArgs(1),
		ValidArgs: names,
		RunE: func(cmd *cobra.Command, args []string) error {
			event := args[0]
			if !slices.Contains(names, event) {
				return usageError("cannot trigger %q: want one of %s", event, strings.Join(names, ", "))
			}
			if f.liveKey() {
				return usageError("trigger works in test mode only, and the API key is a live key (sk_live_…): pass a test key (sk_test_…)")
			}
			c, err := f.Client()
			if err != nil {
				return err
			}
			t := &trigger{c: c, event: event, tag: strings.ToLower(id.Random(12)), ids: map[string]bool{}}
			if err := t.run(cmd.Context()); err != nil {
				return explain(err)
			}
			if f.JSON() {
				return t.printJSON(f.IO)
			}
			return t.print(f.IO)
		},
	}
	return cmd
}

// liveKey reports whether the configured API key is a live one.
func (f *Factory) liveKey() bool { return strings.HasPrefix(f.v.GetString("api_key"), "sk_live_") }

// trigger is one run of `tollgate trigger`: what it made and the events
// those objects emitted.
type trigger struct {
	c     *client.Client
	event string
	// tag makes this run's names unique (its customer, idempotency keys),
	// so runs never collide with each other or with real data.
	tag    string
	made   []madeObject
	ids    map[string]bool // ids of what was made, and of its customer
	events []client.Event
	start  time.Time // the test clock when the run began
}

// madeObject is an object the run made (or the test clock it moved).
type madeObject struct {
	kind, id, note string
	raw            json.RawMessage
}

// keep records an object, replacing an earlier state of the same one, and
// remembers its ids so its events can be told apart.
func (t *trigger) keep(kind, objID, note string, raw json.RawMessage, related ...*string) {
	o := madeObject{kind: kind, id: objID, note: note, raw: raw}
	for _, r := range append(related, &objID) {
		if r != nil && *r != "" {
			t.ids[*r] = true
		}
	}
	for i := range t.made {
		if t.made[i].kind == kind && t.made[i].id == objID {
			t.made[i] = o
			return
		}
	}
	t.made = append(t.made, o)
}

// run makes the event happen and collects the events it emitted.
func (t *trigger) run(ctx context.Context) error {
	// Reading the test clock first also refuses a live key the prefix
	// check could not recognise.
	clock, err := t.c.GetTestClock(ctx)
	if err != nil {
		return err
	}
	t.start = clock.Now
	after, err := t.feedPosition(ctx)
	if err != nil {
		return err
	}
	if err := t.scenario(ctx); err != nil {
		return err
	}
	return t.collect(ctx, after)
}

// feedPosition is where the event feed stands before the run: its newest
// event, or the beginning.
func (t *trigger) feedPosition(ctx context.Context) (string, error) {
	page, err := t.c.ListEvents(ctx, client.ListParams{Limit: 1})
	if err != nil {
		return "", err
	}
	if len(page.Data) == 0 {
		return "1970-01-01T00:00:00Z", nil
	}
	return page.Data[0].ID, nil
}

// collect reads the feed after the run's start until the wanted event of
// the objects made is there: events appear in the feed once every
// transaction that could still precede them has ended, which may take a
// moment.
func (t *trigger) collect(ctx context.Context, after string) error {
	deadline := time.Now().Add(triggerEventWait)
	for {
		evs, err := t.relatedEvents(ctx, after)
		if err != nil {
			return err
		}
		t.events = evs
		if slices.ContainsFunc(evs, func(e client.Event) bool { return e.Type == t.event }) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("made %s but no %s event appeared in GET /v1/events within %s", t.madeIDs(), t.event, triggerEventWait)
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// relatedEvents are the events after `after` whose data is one of the
// objects made, or belongs to them or their customer.
func (t *trigger) relatedEvents(ctx context.Context, after string) ([]client.Event, error) {
	var out []client.Event
	for {
		page, err := t.c.ListEventsAfter(ctx, client.EventsAfterParams{After: after, Limit: 100})
		if err != nil {
			return nil, err
		}
		for _, e := range page.Data {
			if t.related(e.Data) {
				out = append(out, e)
			}
			after = e.ID
		}
		if !page.HasMore {
			return out, nil
		}
	}
}

func (t *trigger) related(data json.RawMessage) bool {
	var refs struct {
		ID             string `json:"id"`
		CustomerID     string `json:"customer_id"`
		SubscriptionID string `json:"subscription_id"`
		InvoiceID      string `json:"invoice_id"`
		PaymentID      string `json:"payment_id"`
	}
	if json.Unmarshal(data, &refs) != nil {
		return false
	}
	for _, v := range []string{refs.ID, refs.CustomerID, refs.SubscriptionID, refs.InvoiceID, refs.PaymentID} {
		if v != "" && t.ids[v] {
			return true
		}
	}
	return false
}

func (t *trigger) madeIDs() string {
	var ids []string
	for _, o := range t.made {
		if o.id != "" {
			ids = append(ids, o.id)
		}
	}
	if len(ids) == 0 {
		return "nothing"
	}
	return strings.Join(ids, ", ")
}

// print shows the objects made and the events seen, for people.
func (t *trigger) print(streams *IO) error {
	title := "Triggered " + t.event
	if streams.Color() {
		title = green("✓") + " " + title
	}
	if _, err := fmt.Fprintln(streams.Out, title); err != nil {
		return err
	}
	objs := newTablePrinter(streams)
	for _, o := range t.made {
		objs.row("  "+o.kind, o.id, o.note)
	}
	if err := objs.print(); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(streams.Out, "Events"); err != nil {
		return err
	}
	evs := newTablePrinter(streams)
	for _, e := range t.events {
		evs.row("  "+e.ID, e.Type, when(&e.CreatedAt))
	}
	return evs.print()
}

// printJSON prints one object: the event type, the objects made as the API
// sent them (the test clock included when it moved), and the events.
func (t *trigger) printJSON(streams *IO) error {
	var b bytes.Buffer
	ev, _ := json.Marshal(t.event)
	b.WriteString(`{"object":"trigger","event":`)
	b.Write(ev)
	b.WriteString(`,"objects":[`)
	for i, o := range t.made {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(o.raw)
	}
	b.WriteString(`],"events":[`)
	for i, e := range t.events {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e.Raw)
	}
	b.WriteString("]}\n")
	var compact bytes.Buffer
	if err := json.Compact(&compact, b.Bytes()); err != nil {
		return err
	}
	return printRaw(streams.Out, compact.Bytes())
}
