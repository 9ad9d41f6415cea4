package cmd

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
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
	KeyPrefix   string
	BatchSize   int
	Concurrency int
}

// maxLine bounds one JSON line (a batch body may be 8 MiB).
const maxLine = 1 << 20

func newMeterSendCmd(f *Factory) *cobra.Command {
	o := &meterSendOptions{}
	cmd := &cobra.Command{
		Use:   "send (--event-name NAME [--value N] | --file FILE|-)",
		Short: "Send usage events: one from flags, or many from JSON lines",
		Long: `Send usage events: one from flags, or many from a file (or stdin with --file -)
holding one JSON event per line, in the API's shape:

  {"event_name":"api_calls","external_customer_id":"u_42","value":3}

Lines go out in batches of up to 500 over a few concurrent requests, retried
after rate limiting and network errors. A line without an idempotency_key gets
one derived from the input's identity, the line number and the line, so
running the same command again after a failure or a crash never counts an
event twice. For a file the identity is its content; for stdin it is
--key-prefix (pass a new one, such as a date, to send identical input again as
new events). Progress goes to stderr when it is a terminal; the summary lists
rejected lines by number, and the command exits 1 when any line was rejected
or not sent.`,
		Example: `  tollgate meter send --event-name api_calls --external-customer-id u_42 --value 3
  tollgate meter send --file usage.jsonl
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
	fl.StringVar(&o.KeyPrefix, "key-prefix", "", "namespace for derived idempotency keys (default: the file's content hash; none for stdin)")
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

// sendLine is one input line ready to send.
type sendLine struct {
	n    int // 1-based line number
	body json.RawMessage
}

// sendSummary is what `meter send` reports.
type sendSummary struct {
	Lines      int            `json:"lines"`
	Accepted   int            `json:"accepted"`
	Duplicates int            `json:"duplicates"`
	Rejected   int            `json:"rejected"`
	NotSent    int            `json:"not_sent"`
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
	sum := sendSummary{Errors: []lineErrorOut{}}
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
						case d.Event.Deduplicated:
							sum.Duplicates++
						default:
							sum.Accepted++
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
	return reportSend(f, sum, fatal)
}

// openLines opens --file and works out the namespace of derived keys.
func openLines(f *Factory, o *meterSendOptions) (r io.Reader, total int, prefix string, closeFn func(), err error) {
	if o.File == "-" {
		return f.IO.In, -1, o.KeyPrefix, func() {}, nil
	}
	file, err := os.Open(o.File)
	if err != nil {
		return nil, 0, "", nil, usageError("--file: %v", err)
	}
	// One pass for the content hash and the line count (the progress
	// bar's total), then rewind for the real one.
	h := sha256.New()
	tee := io.TeeReader(file, h)
	sc := bufio.NewScanner(tee)
	sc.Buffer(make([]byte, 0, 1<<16), maxLine)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			total++
		}
	}
	if _, err := io.Copy(io.Discard, tee); err != nil {
		file.Close()
		return nil, 0, "", nil, err
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		file.Close()
		return nil, 0, "", nil, err
	}
	prefix = o.KeyPrefix
	if prefix == "" {
		prefix = hex.EncodeToString(h.Sum(nil))
	}
	return file, total, prefix, func() { file.Close() }, nil
}

// readLines turns lines into batches, giving each line without an
// idempotency_key a derived one; a line that is not a JSON object is
// rejected here with its number. Blank lines are skipped. n counts lines.
func readLines(ctx context.Context, in io.Reader, prefix string, size int, out chan<- []sendLine, reject func(lineErrorOut), n *int) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 1<<16), maxLine)
	var batch []sendLine
	lineNo := 0
	for sc.Scan() {
		lineNo++
		raw := strings.TrimSpace(sc.Text())
		if raw == "" {
			continue
		}
		*n++
		body, err := withKey(prefix, lineNo, raw)
		if err != nil {
			reject(lineErrorOut{Line: lineNo, Code: client.CodeInvalidJSON, Message: err.Error()})
			continue
		}
		batch = append(batch, sendLine{n: lineNo, body: body})
		if len(batch) == size {
			select {
			case out <- batch:
			case <-ctx.Done():
				return ctx.Err()
			}
			batch = nil
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading line %d: %w", lineNo+1, err)
	}
	if len(batch) > 0 {
		select {
		case out <- batch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// withKey returns the line as a JSON object carrying an idempotency_key:
// its own, or one derived from prefix, the line number and the line.
func withKey(prefix string, lineNo int, raw string) (json.RawMessage, error) {
	if !strings.HasPrefix(raw, "{") {
		return nil, errors.New("line is not a JSON object")
	}
	var head struct {
		IdempotencyKey json.RawMessage `json:"idempotency_key"`
	}
	if err := json.Unmarshal([]byte(raw), &head); err != nil {
		return nil, fmt.Errorf("line is not valid JSON: %v", err)
	}
	if head.IdempotencyKey != nil && string(head.IdempotencyKey) != "null" {
		return json.RawMessage(raw), nil
	}
	sum := sha256.Sum256([]byte(prefix + "\x00" + strconv.Itoa(lineNo) + "\x00" + raw))
	key := `"idempotency_key":"ln_` + hex.EncodeToString(sum[:20]) + `"`
	rest := strings.TrimSpace(raw[1:])
	if rest == "}" {
		return json.RawMessage("{" + key + "}"), nil
	}
	return json.RawMessage("{" + key + "," + rest), nil
}

func reportSend(f *Factory, sum sendSummary, fatal error) error {
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
	switch {
	case fatal != nil:
		return fmt.Errorf("%w\nrun the same command again to send the rest: lines already stored count once", explain(fatal))
	case sum.Rejected > 0:
		return exitWith(ExitError, nil)
	}
	return nil
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
