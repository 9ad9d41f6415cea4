package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/ssrf"
	"github.com/tollgatehq/tollgate/internal/webhooks"
)

// This file is the webhook delivery worker pool. Deliveries are rows (made
// by events.Emit in the event's transaction); a worker claims a batch of due
// rows with FOR UPDATE SKIP LOCKED inside a transaction, sends the attempts,
// records them and commits. Holding the row locks for the requests means no
// other worker, here or in another replica, can send the same attempt, and a
// process killed mid-request loses nothing: its transaction dies with its
// connection and the row is claimed again (at-least-once delivery).
//
// Workers sleep until woken: by a NOTIFY on events.DeliveryChannel (a
// dedicated LISTEN connection, when the database URL is known), by the
// scheduler when the earliest pending retry falls due, or by the poll that
// bounds how long a missed wake-up can delay work.

// StartOption adjusts what Start runs beyond Config.
type StartOption func(*startOptions)

type startOptions struct {
	databaseURL string
	workers     int
	poll        time.Duration
	retention   time.Duration
}

// WithEventRetention sets how long events (with their deliveries and
// attempts) are kept; the default is events.DefaultRetention, 30 days.
func WithEventRetention(d time.Duration) StartOption {
	return func(o *startOptions) { o.retention = d }
}

// WithDatabaseURL gives the daemon the database's connection string for a
// dedicated LISTEN connection, so new deliveries leave within milliseconds.
// Without it, delivery workers poll every second.
func WithDatabaseURL(url string) StartOption {
	return func(o *startOptions) { o.databaseURL = url }
}

// WithDeliveryWorkers sets how many delivery workers run (default 4), each
// sending a batch of up to 16 deliveries at once and holding one database
// connection of the pool while it does.
func WithDeliveryWorkers(n int) StartOption {
	return func(o *startOptions) { o.workers = n }
}

// Delivery tuning.
const (
	defaultWorkers  = 4
	batchSize       = 16
	deliveryTimeout = 10 * time.Second
	// pollListening bounds the wait for work missed by notifications (e.g.
	// a retry scheduled by a replica that then died); pollAlone is the
	// interval without a LISTEN connection.
	pollListening = 5 * time.Second
	pollAlone     = time.Second
	// drainBody is how much of a response is read past what is recorded,
	// so the connection can be reused.
	drainBody = 64 << 10
	// pruneEvery is how often old events are deleted, in batches of
	// pruneBatch; the first run is pruneDelay after start.
	pruneEvery = time.Hour
	pruneDelay = time.Minute
	pruneBatch = 1000
)

// deliverer runs the workers, the scheduler and the listener.
type deliverer struct {
	db        *sqlx.DB
	log       *slog.Logger
	client    *http.Client
	schedule  []time.Duration
	userAgent string
	insecure  bool
	workers   int
	batch     int
	poll      time.Duration
	dsn       string
	retention time.Duration
	listener  *pq.Listener

	wake    chan struct{} // one token wakes one idle worker
	resched chan struct{} // asks the scheduler to look again
	stop    chan struct{} // closed on shutdown: claim nothing more
	// sendCtx governs in-flight attempts; cancelled only when shutdown runs
	// out of time (the attempt is then not recorded and is sent again).
	sendCtx    context.Context
	cancelSend context.CancelFunc
	wg         sync.WaitGroup
}

func newDeliverer(cfg Config, db *sqlx.DB, log *slog.Logger, o startOptions) (*deliverer, error) {
	if o.workers <= 0 {
		o.workers = defaultWorkers
	}
	client, err := ssrf.NewClient(ssrf.Options{
		AllowPrivate: cfg.AllowInsecureWebhooks, CAFile: cfg.WebhookCAFile,
		Timeout: deliveryTimeout, MaxConnsPerHost: o.workers * batchSize,
	})
	if err != nil {
		return nil, err
	}
	d := &deliverer{
		db: db, log: log.With("component", "webhooks"), client: client, schedule: cfg.WebhookRetrySchedule,
		userAgent: "tollgate-webhooks/" + cfg.Version, insecure: cfg.AllowInsecureWebhooks,
		workers: o.workers, batch: batchSize, poll: o.poll, retention: o.retention,
		wake: make(chan struct{}, o.workers), resched: make(chan struct{}, 1), stop: make(chan struct{}),
	}
	if d.retention <= 0 {
		d.retention = events.DefaultRetention
	}
	if d.poll <= 0 {
		d.poll = pollAlone
		if o.databaseURL != "" {
			d.poll = pollListening
		}
	}
	d.dsn = o.databaseURL
	d.sendCtx, d.cancelSend = context.WithCancel(context.Background())
	return d, nil
}

// start launches the goroutines.
func (d *deliverer) start() {
	if d.dsn != "" {
		d.listener = pq.NewListener(d.dsn, 100*time.Millisecond, 5*time.Second, func(ev pq.ListenerEventType, err error) {
			if err != nil && !d.stopping() {
				d.log.Warn("delivery wake-up connection", "event", ev, "error", err)
			}
		})
		d.wg.Add(2)
		go func() {
			defer d.wg.Done()
			// Listen blocks until connected; the listener reconnects by
			// itself and re-listens.
			if err := d.listener.Listen(events.DeliveryChannel); err != nil && !d.stopping() {
				d.log.Error("cannot LISTEN for deliveries; polling instead", "error", err)
			}
		}()
		go func() {
			defer d.wg.Done()
			for n := range d.listener.NotificationChannel() {
				if n == nil { // reconnected: notifications may have been missed
					d.reschedule()
				}
				d.kick()
			}
		}()
	}
	d.wg.Add(2 + d.workers)
	go func() { defer d.wg.Done(); d.scheduler() }()
	go func() { defer d.wg.Done(); d.pruner() }()
	for range d.workers {
		go func() { defer d.wg.Done(); d.worker() }()
	}
}

// shutdown stops claiming, lets in-flight attempts finish until ctx is done
// (then cancels them), and closes the listener.
func (d *deliverer) shutdown(ctx context.Context) error {
	close(d.stop)
	if d.listener != nil {
		_ = d.listener.Close() // ends the notification loop
	}
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	select {
	case <-done:
		d.cancelSend()
		return nil
	case <-ctx.Done():
		d.cancelSend()
		<-done
		return fmt.Errorf("webhook deliveries: %w", ctx.Err())
	}
}

func (d *deliverer) stopping() bool {
	select {
	case <-d.stop:
		return true
	default:
		return false
	}
}

// kick wakes one idle worker (a no-op when every worker already has a
// token).
func (d *deliverer) kick() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *deliverer) reschedule() {
	select {
	case d.resched <- struct{}{}:
	default:
	}
}

// scheduler wakes a worker whenever it runs, then sleeps until the earliest
// future retry, the poll interval, or a request to look again.
func (d *deliverer) scheduler() {
	for {
		d.kick()
		wait := d.poll
		ctx, cancel := context.WithTimeout(d.sendCtx, 5*time.Second)
		at, ok, err := webhooks.NextDue(ctx, d.db)
		cancel()
		if err != nil && !d.stopping() {
			d.log.Debug("next due delivery", "error", err)
		}
		if ok {
			wait = min(wait, time.Until(at))
		}
		timer := time.NewTimer(max(wait, time.Millisecond))
		select {
		case <-d.stop:
			timer.Stop()
			return
		case <-d.resched:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// pruner deletes events older than the retention period, hourly.
func (d *deliverer) pruner() {
	timer := time.NewTimer(pruneDelay)
	defer timer.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-timer.C:
		}
		for !d.stopping() {
			n, err := events.Prune(d.sendCtx, d.db, d.retention, pruneBatch)
			if err != nil {
				d.log.Warn("pruning old events", "error", err)
				break
			}
			if n > 0 {
				d.log.Info("pruned old events", "count", n, "retention", d.retention)
			}
			if n < pruneBatch {
				break
			}
		}
		timer.Reset(pruneEvery)
	}
}

// worker delivers while deliveries are due, then waits to be woken.
func (d *deliverer) worker() {
	backoff := 100 * time.Millisecond
	for !d.stopping() {
		claimed, err := d.deliverBatch()
		if err != nil {
			if d.stopping() {
				return
			}
			d.log.Warn("webhook delivery", "error", err, "retry_in", backoff)
			select {
			case <-d.stop:
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		if claimed {
			continue
		}
		select {
		case <-d.stop:
			return
		case <-d.wake:
		}
	}
}

// deliverBatch claims up to batchSize due deliveries, sends their attempts
// concurrently and records them, in one transaction; claimed is false when
// nothing was due. Batches keep workers few, so they do not contend for the
// head of the queue, and share one claim and one commit among many
// deliveries; the cost is that an attempt is recorded only when the slowest
// of its batch has answered (at most the 10 s timeout).
func (d *deliverer) deliverBatch() (claimed bool, err error) {
	ctx := d.sendCtx
	tx, err := d.db.BeginTxx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	jobs, err := webhooks.Claim(ctx, tx, d.batch)
	if err != nil || len(jobs) == 0 {
		return false, err
	}
	d.kick() // more may be due: let another worker look while this one sends
	// Mark the transaction as one that emits no events, so tails of the
	// event feed need not wait for it (see events.ListAfter).
	if _, err := tx.ExecContext(ctx, `SELECT set_config('application_name', $1, true)`, events.WorkerApplicationName); err != nil {
		return true, err
	}
	results := make([]webhooks.Result, len(jobs))
	var wg sync.WaitGroup
	for i, job := range jobs {
		wg.Go(func() { results[i] = d.send(ctx, job) })
	}
	wg.Wait()
	retry := false
	for i, job := range jobs {
		status, err := webhooks.Record(ctx, tx, job, results[i], d.schedule)
		if err != nil {
			// The receivers may have the attempts; they will be sent again.
			return true, fmt.Errorf("recording attempt %d of %s: %w", job.Attempt(), job.ID, err)
		}
		retry = retry || status == webhooks.StatusPending
		d.log.Debug("webhook attempt", "delivery", job.ID, "event", job.EventID, "attempt", job.Attempt(),
			"status", results[i].Status, "error", results[i].Err, "latency", results[i].Latency, "now", status)
	}
	if err := tx.Commit(); err != nil {
		return true, fmt.Errorf("recording %d attempts: %w", len(jobs), err)
	}
	if retry {
		d.reschedule()
	}
	return true, nil
}
