package daemon

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/jobs"
	"github.com/tollgatehq/tollgate/internal/ssrf"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/webhooks"
)

// This file is the webhook delivery job. Its step claims due deliveries
// (leases: see package webhooks) as far as there is room, hands each to a
// sender goroutine, and returns; the attempts an endpoint was given by one
// claim are recorded together once the last of them is answered, or soon
// after the first if another hangs (see answers),
// by the recorder, which commits the answers that arrive together in one
// transaction. So a slow or dead endpoint costs only its own deliveries: the
// pacer (deliveries_pace.go) holds it to its share of the senders, and
// nothing else waits for it.

// Delivery tuning.
const (
	jobDeliveries   = "webhook-deliveries"
	deliveryTimeout = 10 * time.Second
	// deliveryLease is how long a claimed attempt is reserved: past the
	// timeout, so only a dead worker's attempt is ever claimed again (it is
	// then recorded as interrupted and the next attempt made).
	deliveryLease = deliveryTimeout + 5*time.Second
	// deliveryPoll bounds the wait for work missed by wake-ups (a retry
	// scheduled by a replica that then died, say).
	deliveryPoll = 5 * time.Second
	// drainBody is how much of a response is read past what is recorded,
	// so the connection can be reused.
	drainBody = 64 << 10
	// recordBatch bounds the answers one recording transaction commits.
	recordBatch = 64
	// recorders is how many recording transactions may run at once. Their
	// commits do not wait for the disk (see webhooks.Record), so a batch's
	// statement takes about a millisecond and two are enough for an answer
	// not to wait behind another batch; more split the answers that arrive
	// together into more, smaller statements, each planned and run for a
	// few rows.
	recorders = 2
	// inFlightWait bounds the sleep between claims while attempts are in
	// flight (see deliverer.next).
	inFlightWait = 100 * time.Millisecond
)

// deliverer sends webhook attempts and records them.
type deliverer struct {
	db *store.DB
	// queue runs the claims and the records, on their generic plans
	// (store.DB.GenericPlans); it is db when that pool could not open.
	queue     *store.DB
	log       *slog.Logger
	client    *http.Client
	schedule  []time.Duration
	userAgent string
	insecure  bool
	kick      func() // wakes the claiming step
	metrics   *deliveryMetrics
	// sendCtx governs attempts in flight; cancelled only when shutdown runs
	// out of time (the attempt is then claimed again after its lease).
	sendCtx    context.Context
	cancelSend context.CancelFunc

	slots chan struct{} // one token per attempt in flight
	mu    sync.Mutex
	pacer *pacer // guarded by mu
	// leftBehind (guarded by mu) is set when the latest claim may have
	// left due deliveries for want of room, and released counts the
	// attempts whose slots were freed: a recording wakes the job only when
	// freeing room may let it claim something (see claim and commit).
	leftBehind bool
	released   uint64
	// last is the latest claim's outcome, guarded by mu (see hold).
	last     lastClaim
	records  chan []webhooks.Answer
	sending  sync.WaitGroup
	recorded chan struct{} // closed when the recorder has stopped
	failLog  *rateLog
}

func newDeliverer(cfg Config, db *store.DB, log *slog.Logger, m *deliveryMetrics) (*deliverer, error) {
	client, err := ssrf.NewClient(ssrf.Options{
		AllowPrivate: cfg.AllowInsecureWebhooks, CAFile: cfg.WebhookCAFile,
		Timeout: deliveryTimeout, MaxConnsPerHost: cfg.DeliveriesPerEndpoint,
	})
	if err != nil {
		return nil, err
	}
	log = log.With("component", "webhooks")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	queue, err := db.GenericPlans(ctx, recorders+1)
	if err != nil {
		log.Warn("webhook claims and records run on the main pool", "error", err)
		queue = db
	}
	sendCtx, cancelSend := context.WithCancel(context.Background())
	return &deliverer{
		sendCtx: sendCtx, cancelSend: cancelSend,
		db: db, queue: queue, log: log, client: client, schedule: cfg.WebhookRetrySchedule,
		userAgent: "tollgate-webhooks/" + cfg.Version, insecure: cfg.AllowInsecureWebhooks,
		metrics: m, slots: make(chan struct{}, cfg.DeliveryWorkers), pacer: newPacer(cfg.DeliveryWorkers, cfg.DeliveriesPerEndpoint),
		records: make(chan []webhooks.Answer, cfg.DeliveryWorkers), recorded: make(chan struct{}), failLog: newRateLog(log, time.Second),
	}, nil
}

// job is the delivery job for the runner.
func (d *deliverer) job(r *jobs.Runner) jobs.Job {
	d.kick = func() { r.Kick(jobDeliveries) }
	return jobs.Job{
		Name: jobDeliveries, Run: d.claim, Every: deliveryPoll, Wake: events.DeliveryChannel,
		Next: d.next,
	}
}

// next is when the job must claim next, short of a wake-up. While attempts
// are in flight it does not read the queue: it claims again after
// inFlightWait, if no recording woke it sooner. Under a steady stream the
// recordings wake it every few milliseconds, and that spares a read of the
// queue a claim; an attempt that hangs wakes nobody, and the wait keeps the
// retries of other endpoints on their schedule.
func (d *deliverer) next(ctx context.Context, claimedAt time.Time) (time.Time, bool, error) {
	if len(d.slots) > 0 {
		return claimedAt.Add(inFlightWait), true, nil
	}
	return webhooks.NextDue(ctx, d.db, claimedAt)
}

// claim leases as many due deliveries as there is room for and starts
// their senders; more is true when it filled the room (more may be due).
//
// It notes whether it may have left due deliveries behind for want of
// room: no room at all, endpoints too busy to be read, or an endpoint
// given less room than it had candidates for. Only then does a recording
// that frees room wake the job; otherwise a wake-up would only read the
// queue to find what the claim already left there, nothing (a recording
// after every batch of answers made most claims of a steady stream empty).
// Should room be freed while the claim runs, after it read how much there
// was, it claims again at once: the recording that freed it saw no reason
// to wake it.
func (d *deliverer) claim(ctx context.Context, _ time.Time) (more bool, err error) {
	d.mu.Lock()
	released := d.released
	if d.hold(time.Now()) {
		d.mu.Unlock()
		return false, nil
	}
	full := d.pacer.full()
	d.mu.Unlock()
	room := cap(d.slots) - len(d.slots)
	if room == 0 {
		return d.claimed(released, true), nil
	}
	var given map[string]int
	share := func(due []string) map[string]int {
		d.mu.Lock()
		defer d.mu.Unlock()
		given = d.pacer.room(due)
		out := make(map[string]int, len(given))
		for ep, n := range given {
			out[ep] = n
		}
		return out
	}
	claimed, err := webhooks.Claim(ctx, d.queue, room, full, share, deliveryLease)
	if err != nil {
		d.mu.Lock()
		d.leftBehind = true // not known: let the next recording look
		d.mu.Unlock()
		return false, err
	}
	now := time.Now()
	groups := map[string]*answers{}
	for _, job := range claimed {
		if groups[job.EndpointID] == nil {
			groups[job.EndpointID] = newAnswers()
		}
		groups[job.EndpointID].left++
	}
	for _, job := range claimed {
		d.slots <- struct{}{}
		d.mu.Lock()
		d.pacer.started(job.EndpointID, now)
		d.mu.Unlock()
		d.sending.Add(1)
		go d.attempt(job, groups[job.EndpointID])
		given[job.EndpointID]--
	}
	short := len(full) > 0
	for _, n := range given {
		short = short || n <= 0
	}
	if len(claimed) == room {
		d.claimed(released, true)
		return true, nil
	}
	return d.claimed(released, short), nil
}

// attempt sends one claimed attempt and hands its answer to the recorder
// with the rest of its group's (see answers).
func (d *deliverer) attempt(job webhooks.Job, group *answers) {
	defer d.sending.Done()
	var res webhooks.Result
	if job.Exhausted(d.schedule) {
		res.NotSent = true
	} else {
		res = d.send(d.sendCtx, job)
		d.mu.Lock()
		d.pacer.answered(job.EndpointID, res.Latency)
		d.mu.Unlock()
	}
	all := group.add(webhooks.Answer{Job: job, Result: res})
	if all == nil {
		all = group.wait(answerWait)
	}
	if len(all) > 0 {
		d.records <- all
	}
}

// record runs until stop is closed and the senders are done. Its
// recorders each commit the answers that arrive together in one
// transaction; there are several, so an answer does not wait behind
// another batch's commit: until it is on record, a crash makes the
// endpoint's answer lost and the attempt is sent again.
func (d *deliverer) record(stop <-chan struct{}) {
	defer close(d.recorded)
	go func() {
		<-stop
		// Senders still in flight finish (or are cancelled) and send
		// their answers; closing records after them ends the recorders.
		d.sending.Wait()
		close(d.records)
	}()
	defer func() {
		if d.queue != d.db {
			d.queue.Close()
		}
	}()
	var wg sync.WaitGroup
	for range recorders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.recordAnswers()
		}()
	}
	wg.Wait()
}

// recordAnswers commits answers as they come, each time those that are
// waiting (up to recordBatch, give or take a claim's answers), until
// records is closed.
func (d *deliverer) recordAnswers() {
	for a := range d.records {
		batch := a
	fill:
		for len(batch) < recordBatch {
			select {
			case a, ok := <-d.records:
				if !ok {
					break fill
				}
				batch = append(batch, a...)
			default:
				break fill
			}
		}
		d.commit(batch)
	}
}

// commit records a batch of answers, retrying while the database is away:
// an answered attempt must be on record before the next is made (until the
// lease expires, nobody makes it).
func (d *deliverer) commit(batch []webhooks.Answer) {
	backoff := 100 * time.Millisecond
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		// On the pool, not in a transaction: the answers are safe once
		// their one statement is sent (see webhooks.Record).
		err := webhooks.Record(ctx, d.queue, batch, d.schedule)
		cancel()
		if err == nil {
			for _, a := range batch {
				d.observe(a)
				d.release(a.Job)
			}
			d.wake(batch)
			return
		}
		if attempt >= 8 {
			d.log.Error("could not record webhook attempts; they will be claimed again when their lease expires", "attempts", len(batch), "error", err)
			for _, a := range batch {
				d.release(a.Job)
			}
			d.wake(batch)
			return
		}
		d.log.Warn("recording webhook attempts", "error", err, "retry_in", backoff)
		time.Sleep(backoff)
		backoff = min(2*backoff, 5*time.Second)
	}
}

// observe logs a failed attempt (rate-limited) and counts every attempt.
func (d *deliverer) observe(a webhooks.Answer) {
	outcome := "succeeded"
	switch {
	case a.Result.NotSent:
		outcome = "exhausted"
	case a.Result.Err != "":
		outcome = "error"
	case !a.Result.OK():
		outcome = "non_2xx"
	}
	d.metrics.attempts.WithLabelValues(outcome).Inc()
	if outcome == "succeeded" {
		return
	}
	reason := a.Result.Err
	if reason == "" && !a.Result.NotSent {
		reason = "HTTP " + http.StatusText(a.Result.Status)
	}
	d.failLog.warn("webhook attempt failed", "delivery", a.Job.ID, "endpoint", a.Job.EndpointID, "url", a.Job.URL,
		"attempt", a.Job.Attempt, "status", a.Result.Status, "reason", truncate(reason, 200))
}

// deliveryMetrics are the delivery queue's Prometheus series.
type deliveryMetrics struct {
	attempts *prometheus.CounterVec
}

func newDeliveryMetrics(reg *prometheus.Registry, db *store.DB) *deliveryMetrics {
	m := &deliveryMetrics{attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tollgate_webhook_attempts_total", Help: "Webhook delivery attempts by outcome (succeeded, non_2xx, error, exhausted).",
	}, []string{"outcome"})}
	reg.MustRegister(m.attempts, queueCollector{db: db,
		pending: prometheus.NewDesc("tollgate_webhook_deliveries_pending", "Webhook deliveries waiting to be attempted (due or scheduled).", nil, nil),
		oldest:  prometheus.NewDesc("tollgate_webhook_oldest_due_seconds", "How long the oldest due webhook delivery has waited.", nil, nil),
	})
	return m
}

// queueCollector reads the queue's depth and oldest due age at scrape time.
type queueCollector struct {
	db              *store.DB
	pending, oldest *prometheus.Desc
}

func (c queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.pending; ch <- c.oldest }

func (c queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := webhooks.QueueStats(ctx, c.db)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(st.Pending))
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, st.OldestDueAge.Seconds())
}
