package batch

// Queued is how many calls wait for a batch.
func (g *Group[I, R]) Queued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}
