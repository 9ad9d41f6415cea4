// Package components holds the UI's reusable parts: a cursor over rows, a
// scrolling text pane, and a page of form fields.
package components

// Rows is a cursor over n rows shown height at a time; it keeps the cursor
// on screen as it moves.
type Rows struct {
	Cursor, Offset int
	n, height      int
}

// SetSize sets the number of rows and the lines available, and clamps.
func (r *Rows) SetSize(n, height int) {
	r.n, r.height = n, max(height, 1)
	r.clamp()
}

// Len is the number of rows.
func (r *Rows) Len() int { return r.n }

// Move moves the cursor by d rows.
func (r *Rows) Move(d int) { r.Cursor += d; r.clamp() }

// Top moves to the first row.
func (r *Rows) Top() { r.Cursor = 0; r.clamp() }

// Bottom moves to the last row.
func (r *Rows) Bottom() { r.Cursor = r.n - 1; r.clamp() }

// Half is half a screen, for ctrl+d and ctrl+u.
func (r *Rows) Half() int { return max(r.height/2, 1) }

// AtEnd reports whether the cursor is on the last row (or there are none).
func (r *Rows) AtEnd() bool { return r.Cursor >= r.n-1 }

// Near reports whether the cursor is within k rows of the end.
func (r *Rows) Near(k int) bool { return r.n-1-r.Cursor <= k }

// Visible returns the half-open range of rows on screen.
func (r *Rows) Visible() (from, to int) {
	return r.Offset, min(r.Offset+r.height, r.n)
}

func (r *Rows) clamp() {
	r.Cursor = max(min(r.Cursor, r.n-1), 0)
	if r.Cursor < r.Offset {
		r.Offset = r.Cursor
	}
	if r.Cursor >= r.Offset+r.height {
		r.Offset = r.Cursor - r.height + 1
	}
	r.Offset = max(min(r.Offset, r.n-r.height), 0)
}
