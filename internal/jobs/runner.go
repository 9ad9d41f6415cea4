package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/clock"
	"github.com/tollgatehq/tollgate/internal/store"
)

// Runner runs jobs until Stop.
type Runner struct {
	db    *store.DB
	clock clock.Clock
	log   *slog.Logger
	jobs  map[string]*loop
	order []*loop

	listener *pq.Listener
	unsub    []func()
	stop     chan struct{}
	// ctx governs in-flight work; cancelled only when Stop runs out of time.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// loop is one job and the wake-up channel of its loops.
type loop struct {
	Job
	wake chan struct{}
}

// New returns a Runner over db that tells the time by clk.
func New(db *store.DB, clk clock.Clock, log *slog.Logger) *Runner {
	ctx, cancel := context.WithCancel(context.Background())
	return &Runner{db: db, clock: clk, log: log.With("component", "jobs"), jobs: map[string]*loop{},
		stop: make(chan struct{}), ctx: ctx, cancel: cancel}
}

// Add registers a job; call it before Start. A job that fails validation,
// or a second job of one name, is an error.
func (r *Runner) Add(j Job) error {
	if err := j.validate(); err != nil {
		return err
	}
	if _, dup := r.jobs[j.Name]; dup {
		return fmt.Errorf("jobs: two jobs named %s", j.Name)
	}
	if j.Workers <= 0 {
		j.Workers = 1
	}
	l := &loop{Job: j, wake: make(chan struct{}, j.Workers)}
	r.jobs[j.Name] = l
	r.order = append(r.order, l)
	return nil
}

// Start launches every job's loops and, when the pool knows its URL, a
// LISTEN connection that wakes queue jobs on other replicas' commits.
func (r *Runner) Start() {
	channels := map[string]bool{}
	for _, l := range r.order {
		if l.Wake != "" {
			channels[l.Wake] = true
			r.unsub = append(r.unsub, r.db.Subscribe(l.Wake, l.kick))
		}
	}
	if len(channels) > 0 && r.db.URL() != "" {
		r.listen(channels)
	}
	for _, l := range r.order {
		for range l.Workers {
			r.wg.Add(1)
			go func() { defer r.wg.Done(); r.run(l) }()
		}
	}
}

// listen follows NOTIFYs from other replicas; a reconnection wakes every
// job, since notifications may have been missed meanwhile.
func (r *Runner) listen(channels map[string]bool) {
	r.listener = pq.NewListener(r.db.URL(), 100*time.Millisecond, 5*time.Second, func(ev pq.ListenerEventType, err error) {
		if err != nil && !r.stopping() {
			r.log.Warn("wake-up connection", "event", ev, "error", err)
		}
	})
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for ch := range channels {
			// Listen blocks until connected; the listener reconnects by
			// itself and listens again.
			if err := r.listener.Listen(ch); err != nil && !r.stopping() {
				r.log.Error("cannot LISTEN; polling instead", "channel", ch, "error", err)
			}
		}
	}()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for n := range r.listener.NotificationChannel() {
			switch {
			case n == nil:
				for _, l := range r.order {
					l.kick()
				}
			case n.Extra != r.db.Origin():
				r.db.Wake(n.Channel)
			}
		}
	}()
}

// Kick wakes one idle loop of the named job.
func (r *Runner) Kick(name string) {
	if l, ok := r.jobs[name]; ok {
		l.kick()
	}
}

func (l *loop) kick() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Stop stops claiming work and waits for in-flight steps to finish until
// ctx is done, then cancels them (work cut short is claimed again later).
func (r *Runner) Stop(ctx context.Context) error {
	if r.stopping() {
		return nil
	}
	close(r.stop)
	for _, u := range r.unsub {
		u()
	}
	if r.listener != nil {
		_ = r.listener.Close() // ends the notification loop
	}
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		r.cancel()
		return nil
	case <-ctx.Done():
		r.cancel()
		<-done
		return fmt.Errorf("background jobs: %w", ctx.Err())
	}
}

func (r *Runner) stopping() bool {
	select {
	case <-r.stop:
		return true
	default:
		return false
	}
}

// errUnknownJob is returned by Drain for a name no job has.
var errUnknownJob = errors.New("jobs: no such job")

// Drain runs the named job's steps at now until none reports more work,
// ignoring its schedule: work due later than now is left alone.
func (r *Runner) Drain(ctx context.Context, name string, now time.Time) error {
	l, ok := r.jobs[name]
	if !ok {
		return fmt.Errorf("%w: %s", errUnknownJob, name)
	}
	for {
		more, err := l.Run(ctx, now)
		if err != nil || !more {
			return err
		}
	}
}
