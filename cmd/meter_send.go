package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/id"
)

// meterSendOptions are the flags of `meter send`.
type meterSendOptions struct {
	// One event from flags.
	client.MeterEventParams
	Timestamp  string
	Properties []string
	// Many events from JSON lines.
	File        string
	Idempotent  bool
	KeyPrefix   string
	BatchSize   int
	Concurrency int
}

func newMeterSendCmd(f *Factory) *cobra.Command {
	o := &meterSendOptions{}
	cmd := &cobra.Command{
		Use:   "send (--event-name NAME [--value N] | --file FILE|-)",
		Short: "Send usage events: one from flags, or many from JSON lines",
		Long: `Send usage events: one from flags, or many from a file (or stdin with --file -)
holding one JSON event per line, in the API's shape:

  {"event_name":"api_calls","external_customer_id":"u_42","value":3}

Lines go out in batches of up to 500 over a few concurrent requests, retried
after rate limiting and network errors without counting twice. A line's own
idempotency_key is always sent; a line without one gets a key as follows.

  --file FILE  Keys are derived from the file's content and the line number
               (--idempotent is the default here), so running the same
               command again after a failure or a crash counts nothing twice,
               and a file sent twice counts once. To send the same file again
               as new events, pass a new --key-prefix (such as a date) or
               --idempotent=false.
  --file -     Stdin: each line is a new event, so the same input sent again
               (by a cron job, say) counts again. --idempotent derives keys
               from the line number and the line, and --key-prefix P from P,
               the line number and the line, so that a rerun counts nothing
               twice.

Lines dropped as duplicates (their key was used before) are counted in the
summary and explained on stderr. Progress goes to stderr when it is a
terminal; the summary lists rejected lines by number, and the command exits 1
when any line was rejected or not sent.`,
		Example: `  tollgate meter send --event-name api_calls --external-customer-id u_42 --value 3
  tollgate meter send --file usage.jsonl
  gen-usage | tollgate meter send --file -
  gen-usage | tollgate meter send --file - --key-prefix 2026-07-01`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case o.File != "" && o.EventName != "":
				return usageError("--file and --event-name are mutually exclusive")
			case o.File == "" && o.EventName == "":
				return usageError("pass --event-name for one event, or --file FILE (- for stdin) for JSON lines")
			case o.BatchSize < 1 || o.BatchSize > 500:
				return usageError("--batch-size must be 1 to 500")
			case o.Concurrency < 1 || o.Concurrency > 32:
				return usageError("--concurrency must be 1 to 32")
			case o.File == "" && (cmd.Flags().Changed("idempotent") || o.KeyPrefix != ""):
				return usageError("--idempotent and --key-prefix apply to --file; one event takes --idempotency-key")
			case cmd.Flags().Changed("idempotent") && !o.Idempotent && o.KeyPrefix != "":
				return usageError("--key-prefix derives keys, which --idempotent=false turns off")
			}
			if !cmd.Flags().Changed("idempotent") {
				// A file's reruns are safe by default; stdin's lines are
				// new events unless the user asks for keys.
				o.Idempotent = o.File != "-" || o.KeyPrefix != ""
			}
			if o.File != "" {
				return meterSendLines(cmd.Context(), f, o)
			}
			return meterSendOne(cmd.Context(), f, o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.EventName, "event-name", "", "the meter key to record usage against")
	fl.StringVar(&o.Value, "value", "", "quantity, a non-negative integer (default: the meter decides)")
	fl.StringVar(&o.CustomerID, "customer-id", "", "customer id (cus_…)")
	fl.StringVar(&o.ExternalCustomerID, "external-customer-id", "", "your customer id (created on first use)")
	fl.StringVar(&o.Timestamp, "timestamp", "", "when the usage happened, RFC 3339 (default now)")
	fl.StringVar(&o.IdempotencyKey, "idempotency-key", "", "send again with the same key and it counts once (default: a new key)")
	fl.StringArrayVar(&o.Properties, "property", nil, "event property KEY=VALUE (repeatable; digits are sent as numbers)")
	fl.StringVar(&o.File, "file", "", "JSON lines to send; - reads stdin")
	fl.BoolVar(&o.Idempotent, "idempotent", false, "derive keys for lines without one, so a rerun counts nothing twice (default true for a file, false for stdin)")
	fl.StringVar(&o.KeyPrefix, "key-prefix", "", "namespace of derived keys; implies --idempotent (default: the file's content hash, or none for stdin)")
	fl.IntVar(&o.BatchSize, "batch-size", 500, "events per request, 1 to 500")
	fl.IntVar(&o.Concurrency, "concurrency", 4, "requests in flight at once")
	noFileCompletion(cmd, "event-name", "value", "customer-id", "external-customer-id", "timestamp", "idempotency-key", "property", "key-prefix", "batch-size", "concurrency")
	return cmd
}

func meterSendOne(ctx context.Context, f *Factory, o *meterSendOptions) error {
	p := o.MeterEventParams
	if o.Timestamp != "" {
		t, err := time.Parse(time.RFC3339Nano, o.Timestamp)
		if err != nil {
			return usageError("--timestamp %q: want RFC 3339, e.g. 2026-07-01T12:00:00Z", o.Timestamp)
		}
		p.Timestamp = &t
	}
	if len(o.Properties) > 0 {
		props := map[string]any{}
		for _, kv := range o.Properties {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return usageError("--property %q: want KEY=VALUE", kv)
			}
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
				props[k] = n
			} else {
				props[k] = v
			}
		}
		p.Properties, _ = json.Marshal(props)
	}
	if p.IdempotencyKey == "" {
		// A key makes the client's retries safe.
		p.IdempotencyKey = "cli_" + id.Random(24)
	}
	c, err := f.Client()
	if err != nil {
		return err
	}
	e, err := c.SendMeterEvent(ctx, p)
	if err != nil {
		return explain(err)
	}
	if f.IO.ErrIsTerminal {
		cv := countedValues{}
		cv.add(e)
		warnCountMeters(ctx, f.IO.Err, c, cv, e)
	}
	if f.JSON() {
		return printRaw(f.IO.Out, e.Raw)
	}
	title := "Recorded meter event " + e.ID
	if e.Deduplicated {
		title = "Already recorded (idempotency key seen before): " + e.ID
	}
	return printFields(f.IO, title, [][2]string{
		{"Meter", e.Meter},
		{"Customer", deref(e.CustomerID)},
		{"Value", e.Value},
		{"Timestamp", when(&e.EventTimestamp)},
		{"Idempotency key", deref(e.IdempotencyKey)},
	})
}

// sendSummary is what `meter send` reports.
type sendSummary struct {
	Lines    int `json:"lines"`
	Accepted int `json:"accepted"`
	// Duplicates were dropped: their idempotency key was used before.
	Duplicates int `json:"duplicates"`
	// OwnKeyDuplicates of them carried their own key (the rest a derived one).
	OwnKeyDuplicates int `json:"own_key_duplicates"`
	Rejected         int `json:"rejected"`
	NotSent          int `json:"not_sent"`
	// Idempotent says whether lines without a key got one derived from the
	// input (a rerun counts nothing twice) or a new one for this run.
	Idempotent bool           `json:"idempotent"`
	Errors     []lineErrorOut `json:"errors"`
	Error      string         `json:"error,omitempty"`
}

type lineErrorOut struct {
	Line    int    `json:"line"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func meterSendLines(ctx context.Context, f *Factory, o *meterSendOptions) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	in, total, prefix, closeIn, err := openLines(f, o)
	if err != nil {
		return err
	}
	defer closeIn()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var mu sync.Mutex
	sum := sendSummary{Errors: []lineErrorOut{}, Idempotent: o.Idempotent}
	valued := countedValues{}
	var fatal error
	bar := newProgress(f.IO, total)
	batches := make(chan []sendLine)
	var wg sync.WaitGroup
	for range o.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for batch := range batches {
				bodies := make([]json.RawMessage, len(batch))
				for i, l := range batch {
					bodies[i] = l.body
				}
				res, err := c.SendMeterEventsRaw(ctx, bodies, true)
				mu.Lock()
				if err != nil {
					sum.NotSent += len(batch)
					if fatal == nil {
						fatal = err
						cancel()
					}
				} else {
					for i, d := range res.Data {
						switch {
						case d.Error != nil:
							sum.Rejected++
							sum.Errors = append(sum.Errors, lineErrorOut{Line: batch[i].n, Code: d.Error.Code, Message: d.Error.Message})
						case d.Event.Deduplicated && !o.Idempotent && !batch[i].own:
							// A key made for this run only: an earlier
							// attempt of this batch was stored before its
							// answer was lost, so the event is this run's.
							sum.Accepted++
						case d.Event.Deduplicated:
							sum.Duplicates++
							if batch[i].own {
								sum.OwnKeyDuplicates++
							}
						default:
							sum.Accepted++
							valued.add(d.Event)
						}
					}
				}
				bar.add(len(batch))
				mu.Unlock()
			}
		}()
	}
	readErr := readLines(ctx, in, prefix, o.BatchSize, batches, func(e lineErrorOut) {
		mu.Lock()
		sum.Rejected++
		sum.Errors = append(sum.Errors, e)
		bar.add(1)
		mu.Unlock()
	}, &sum.Lines)
	close(batches)
	wg.Wait()
	bar.done()
	if fatal == nil && readErr != nil && ctx.Err() == nil {
		fatal = readErr
	}
	sum.NotSent = sum.Lines - sum.Accepted - sum.Duplicates - sum.Rejected
	warnCountMeters(ctx, f.IO.Err, c, valued, nil)
	return reportSend(f, o, sum, fatal)
}

func reportSend(f *Factory, o *meterSendOptions, sum sendSummary, fatal error) error {
	if fatal != nil {
		sum.Error = explain(fatal).Error()
	}
	if f.JSON() {
		if err := writeJSONTo(f.IO.Out, sum); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(f.IO.Out, "Sent %d lines: %d accepted, %d duplicates, %d rejected", sum.Lines, sum.Accepted, sum.Duplicates, sum.Rejected)
		if sum.NotSent > 0 {
			fmt.Fprintf(f.IO.Out, ", %d not sent", sum.NotSent)
		}
		fmt.Fprintln(f.IO.Out)
		for _, e := range sum.Errors {
			fmt.Fprintf(f.IO.Out, "  line %d: %s: %s\n", e.Line, e.Code, clean(e.Message))
		}
	}
	warnDuplicates(f.IO.Err, o, sum)
	switch {
	case fatal != nil && o.Idempotent:
		return fmt.Errorf("%w\nrun the same command again to send the rest: lines already stored count once", explain(fatal))
	case fatal != nil && sum.Accepted == 0:
		return explain(fatal)
	case fatal != nil:
		return fmt.Errorf("%w\n%d lines were stored before the error; lines without an idempotency_key had keys for this run only, so sending the same input again counts them twice (--idempotent or --key-prefix makes a rerun safe)", explain(fatal), sum.Accepted)
	case sum.Rejected > 0:
		return exitWith(ExitError, nil)
	}
	return nil
}

// warnDuplicates says on stderr, whatever the output format, how many lines
// were dropped as duplicates and why: exit 0 with usage silently missing is
// what a cron job resending the same lines would otherwise get.
func warnDuplicates(w io.Writer, o *meterSendOptions, sum sendSummary) {
	if sum.Duplicates == 0 {
		return
	}
	fmt.Fprintf(w, "tollgate: %d of %d lines were dropped as duplicates and not counted again: their idempotency key was used before.\n", sum.Duplicates, sum.Lines)
	if own := sum.OwnKeyDuplicates; own > 0 {
		fmt.Fprintf(w, "tollgate: %d of them carry their own idempotency_key, already sent.\n", own)
	}
	if derived := sum.Duplicates - sum.OwnKeyDuplicates; derived > 0 {
		source := "the file's content"
		switch {
		case o.KeyPrefix != "":
			source = fmt.Sprintf("--key-prefix %q", o.KeyPrefix)
		case o.File == "-":
			source = "--idempotent"
		}
		fmt.Fprintf(w, "tollgate: %d of them got keys derived from %s and their line numbers, so these lines were sent before; to send them again as new events, pass a new --key-prefix or --idempotent=false.\n", derived, source)
	}
}

// progress draws a one-line bar on stderr when it is a terminal.
type progress struct {
	io    *IO
	total int // -1: unknown
	n     int
	last  time.Time
}

func newProgress(streams *IO, total int) *progress { return &progress{io: streams, total: total} }

func (p *progress) add(k int) {
	p.n += k
	if !p.io.ErrIsTerminal || time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	p.draw()
}

func (p *progress) draw() {
	if p.total <= 0 {
		fmt.Fprintf(p.io.Err, "\r%d lines sent", p.n)
		return
	}
	const width = 30
	filled := min(width, p.n*width/p.total)
	fmt.Fprintf(p.io.Err, "\r[%s%s] %d/%d lines", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), p.n, p.total)
}

func (p *progress) done() {
	if p.io.ErrIsTerminal {
		p.draw()
		fmt.Fprintln(p.io.Err)
	}
}
