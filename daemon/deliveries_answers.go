package daemon

import (
	"sync"
	"time"

	"github.com/tollgatehq/tollgate/internal/webhooks"
)

// answers gathers the answers to the attempts of one endpoint that one
// claim started, to record them together once the last has come. The
// endpoint's attempts are sent together and mostly answered together, so
// a recording takes them all in one statement rather than the one or two
// that arrived first (the statement costs about as much for a few rows as
// for one: 13 answers a recording instead of 3.8 in the load harness).
// An answer waits for the others at most answerWait: an attempt that hangs
// until its timeout must not keep the others' answers off the record,
// where a crash would send them again.
type answers struct {
	mu   sync.Mutex
	left int
	got  []webhooks.Answer // answered, not yet handed on
	done chan struct{}     // closed when the last answer is in
}

// answerWait bounds how long an answer waits for the rest of its group.
const answerWait = 50 * time.Millisecond

func newAnswers() *answers { return &answers{done: make(chan struct{})} }

// add adds an answer. When it is the last, it returns every answer not
// yet handed on; otherwise nil, and its caller waits (wait).
func (g *answers) add(a webhooks.Answer) []webhooks.Answer {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.got = append(g.got, a)
	if g.left--; g.left > 0 {
		return nil
	}
	close(g.done)
	all := g.got
	g.got = nil
	return all
}

// wait waits for the last answer, at most limit, and returns the answers
// not yet handed on: none when the last came (it took them all).
func (g *answers) wait(limit time.Duration) []webhooks.Answer {
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-g.done:
		return nil
	case <-t.C:
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	out := g.got
	g.got = nil
	return out
}
