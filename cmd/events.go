package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/client/webhook"
)

func newEventsCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "events",
		Short: "List and follow the event feed that backs webhooks",
	}
	cmd.AddCommand(newEventsListCmd(f), newEventsTailCmd(f))
	return cmd
}

func newEventsListCmd(f *Factory) *cobra.Command {
	var o listOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List events, newest first",
		Example: `  tollgate events list --limit 10
  tollgate events list --all --json`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runList(cmd.Context(), cmd, f, o, listing[client.Event]{
				plural: "events",
				fetch:  func(c *client.Client) client.ListFunc[client.Event] { return c.ListEvents },
				raw:    func(v client.Event) json.RawMessage { return v.Raw },
				header: []string{"ID", "TYPE", "CREATED"},
				cut:    []int{1},
				row:    func(v client.Event) []string { return []string{v.ID, v.Type, whenShort(&v.CreatedAt)} },
			})
		},
	}
	addListFlags(cmd, &o)
	noFileCompletion(cmd, "limit", "before")
	return cmd
}

// tailOptions are the flags of `events tail`.
type tailOptions struct {
	Since     time.Duration
	After     string
	Types     []string
	ForwardTo string
	Secret    string
	Interval  time.Duration
}

func (o *tailOptions) check() error {
	switch {
	case o.Since != 0 && o.After != "":
		return usageError("--since and --after cannot be combined")
	case o.Since < 0:
		return usageError("--since must be positive")
	case o.After != "" && !strings.HasPrefix(o.After, "evt_"):
		return usageError("--after must be an event id (evt_…), got %q", o.After)
	case o.ForwardTo != "" && o.Secret == "":
		return usageError("--forward-to needs --secret, the whsec_ secret your handler verifies with")
	case o.ForwardTo != "" && !strings.HasPrefix(o.ForwardTo, "http://") && !strings.HasPrefix(o.ForwardTo, "https://"):
		return usageError("--forward-to must be an http:// or https:// URL")
	case o.Interval <= 0:
		return usageError("--interval must be positive")
	}
	return nil
}

func newEventsTailCmd(f *Factory) *cobra.Command {
	o := &tailOptions{}
	cmd := &cobra.Command{
		Use:   "tail",
		Short: "Follow new events as they happen, optionally forwarding them to a local webhook handler",
		Long: `Follow the event feed: print events as they are emitted, each exactly once, in
order, until interrupted. Start from now (the default), from --since a duration
ago, or --after an event id. The daemon may restart underneath: tail reconnects
with backoff and carries on where it was.

With --forward-to, each event is also POSTed to a URL, signed with --secret
exactly as the daemon signs deliveries, so a webhook handler can be developed
against a local address. Each forward prints "[status] POST url evt_… type".`,
		Example: `  tollgate events tail
  tollgate events tail --since 2h --types invoice.paid,subscription.*
  tollgate events tail --json | jq .type
  tollgate events tail --forward-to http://localhost:3000/webhooks --secret whsec_…`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.check(); err != nil {
				return err
			}
			c, err := f.Client()
			if err != nil {
				return err
			}
			t := &tailer{o: o, c: c, io: f.IO, json: f.JSON(), http: &http.Client{Timeout: 30 * time.Second}, sleep: sleep}
			return t.run(cmd.Context())
		},
	}
	fl := cmd.Flags()
	fl.DurationVar(&o.Since, "since", 0, "start with the events of this last period, e.g. 2h")
	fl.StringVar(&o.After, "after", "", "start after this event id")
	fl.StringSliceVar(&o.Types, "types", nil, "only these event types, comma separated; a trailing * matches a prefix (subscription.*)")
	fl.StringVar(&o.ForwardTo, "forward-to", "", "also POST each event, signed, to this URL")
	fl.StringVar(&o.Secret, "secret", "", "whsec_ secret to sign forwarded events with")
	fl.DurationVar(&o.Interval, "interval", time.Second, "how often to ask for new events while they arrive; idle, the wait grows to 3s")
	noFileCompletion(cmd, "since", "after", "types", "forward-to", "secret", "interval")
	return cmd
}

// tailer follows the feed.
type tailer struct {
	o    *tailOptions
	c    *client.Client
	io   *IO
	json bool
	http *http.Client
	// sleep waits between polls (tests record the waits instead).
	sleep func(context.Context, time.Duration) error
}

// Reconnection backoff bounds.
const (
	tailMinBackoff = 250 * time.Millisecond
	tailMaxBackoff = 10 * time.Second
)

// tailIdleMax is the longest wait between polls while nothing new arrives:
// at most 20 requests a minute, a sixth of a key's list budget (120 a
// minute), so several tails and the operator's own reads share one key.
const tailIdleMax = 3 * time.Second

// pace is how long tail waits before its next poll: --interval while
// events arrive, doubling on each empty answer up to tailIdleMax.
type pace struct{ min, max, next time.Duration }

func newPace(interval time.Duration) *pace {
	return &pace{min: interval, max: max(interval, tailIdleMax), next: interval}
}

// after returns the wait that follows a poll which brought n events.
func (p *pace) after(n int) time.Duration {
	if n > 0 {
		p.next = p.min
		return p.next
	}
	d := p.next
	p.next = min(2*p.next, p.max)
	return d
}

// errorWait is the wait after a failed poll: the backoff, or longer when
// the API said when to come back (retry-after on 429 and 503).
func errorWait(err error, backoff time.Duration) time.Duration {
	var apiErr *client.Error
	if errors.As(err, &apiErr) && apiErr.RetryAfter > backoff {
		return apiErr.RetryAfter
	}
	return backoff
}

func (t *tailer) run(ctx context.Context) error {
	after, err := t.start(ctx)
	if err != nil {
		return err
	}
	backoff, down, p := tailMinBackoff, false, newPace(t.o.Interval)
	for {
		page, err := t.c.ListEventsAfter(ctx, client.EventsAfterParams{After: after, Limit: 100})
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			if !retryable(err) {
				return explain(err)
			}
			wait := errorWait(err, backoff)
			if !down {
				if rateLimited(err) {
					fmt.Fprintf(t.io.Err, "tollgate: rate limited (%v); polling again in %s\n", err, wait.Round(time.Second))
				} else {
					fmt.Fprintf(t.io.Err, "tollgate: lost the API (%v); reconnecting…\n", err)
				}
				down = true
			}
			if t.sleep(ctx, wait) != nil {
				return nil
			}
			backoff = min(2*backoff, tailMaxBackoff)
			continue
		}
		if down {
			fmt.Fprintln(t.io.Err, "tollgate: reconnected")
			down, backoff = false, tailMinBackoff
		}
		for _, ev := range page.Data {
			after = ev.ID
			if t.wanted(ev.Type) {
				if err := t.show(ctx, ev); err != nil {
					return err
				}
			}
		}
		if page.HasMore {
			continue
		}
		if t.sleep(ctx, p.after(len(page.Data))) != nil {
			return nil
		}
	}
}

// start returns the first `after`: the flag's event id, the instant --since
// ago, or the newest event (so only new ones are shown).
func (t *tailer) start(ctx context.Context) (string, error) {
	switch {
	case t.o.After != "":
		return t.o.After, nil
	case t.o.Since > 0:
		// A test-mode feed is stamped by the merchant's test clock: count
		// back from it (a live key has none and counts from the wall clock).
		now := time.Now()
		if clock, err := t.c.GetTestClock(ctx); err == nil {
			now = clock.Now
		}
		return now.Add(-t.o.Since).UTC().Format("2006-01-02T15:04:05.000000Z"), nil
	}
	backoff := tailMinBackoff
	for {
		page, err := t.c.ListEvents(ctx, client.ListParams{Limit: 1})
		if err == nil {
			if len(page.Data) == 0 {
				return "1970-01-01T00:00:00Z", nil
			}
			return page.Data[0].ID, nil
		}
		if !retryable(err) || ctx.Err() != nil {
			return "", explain(err)
		}
		if t.sleep(ctx, errorWait(err, backoff)) != nil {
			return "", ctx.Err()
		}
		backoff = min(2*backoff, tailMaxBackoff)
	}
}

// retryable reports whether tail should wait and try again: the daemon is
// unreachable, restarting or rate limiting, rather than refusing the request.
func retryable(err error) bool {
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		return apiErr.Status == http.StatusTooManyRequests || apiErr.Status >= 500
	}
	return !errors.Is(err, context.Canceled)
}

func rateLimited(err error) bool {
	var apiErr *client.Error
	return errors.As(err, &apiErr) && apiErr.Status == http.StatusTooManyRequests
}

func (t *tailer) wanted(typ string) bool {
	if len(t.o.Types) == 0 {
		return true
	}
	for _, want := range t.o.Types {
		want = strings.TrimSpace(want)
		if prefix, ok := strings.CutSuffix(want, "*"); ok && strings.HasPrefix(typ, prefix) || want == typ {
			return true
		}
	}
	return false
}

// show prints ev (and forwards it with --forward-to).
func (t *tailer) show(ctx context.Context, ev client.Event) error {
	var err error
	if t.json {
		err = printRaw(t.io.Out, webhook.Compact(ev.Raw))
	} else if t.o.ForwardTo == "" {
		_, err = fmt.Fprintf(t.io.Out, "%s  %s  %s\n", fmtTime(ev.CreatedAt), ev.ID, clean(ev.Type))
	}
	if err != nil || t.o.ForwardTo == "" {
		return err
	}
	line := t.forward(ctx, ev)
	out := t.io.Out
	if t.json {
		out = t.io.Err // stdout stays NDJSON
	}
	_, err = fmt.Fprintln(out, line)
	return err
}

// forward POSTs ev to --forward-to signed as the daemon signs a delivery,
// and returns the line reporting it.
func (t *tailer) forward(ctx context.Context, ev client.Event) string {
	what := fmt.Sprintf("POST %s %s %s", t.o.ForwardTo, ev.ID, clean(ev.Type))
	status, _, err := webhook.Forward(ctx, t.http, t.o.ForwardTo, t.o.Secret,
		"tollgate-cli/"+version+" (events tail --forward-to)", ev.Type, ev.ID, ev.Raw)
	if err != nil {
		return "[ERR] " + what + ": " + err.Error()
	}
	return fmt.Sprintf("[%d] %s", status, what)
}

func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
