package archive

import (
	"bufio"
	"compress/gzip"
	"encoding"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
)

// state is what a scan of an archive found: its whole members, and where
// a writer resumes.
type state struct {
	// validEnd is the byte offset after the last whole member.
	validEnd int64
	// sum and counts cover the records of the whole members.
	sum    hash.Hash
	counts map[string]int64
	header *Header
	end    *End
	// phase is the kind of the last record (""), after the position past it.
	phase string
	after cursor
	// torn is why the file does not end at a member's end: nil when it
	// does, else the file ends inside a member (an interrupted write).
	torn error
}

// Damaged is a file that is not a whole archive, nor one cut short by an
// interrupted write: the file is refused, never resumed or overwritten.
type Damaged struct {
	Offset int64 // in the compressed file, at the start of the member
	Reason string
}

func (d *Damaged) Error() string {
	return fmt.Sprintf("damaged in the gzip member at byte %d: %s", d.Offset, d.Reason)
}

// countingReader counts the bytes the gzip reader consumes: it reads a byte
// at a time through ReadByte when it can, so the count after a member is
// that member's end.
type countingReader struct {
	r *bufio.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

// member is what one gzip member held.
type member struct {
	counts map[string]int64
	header *Header
	end    *End
	last   *Line
}

// scan reads an archive from r member by member, checking every line. It
// stops at the first member cut short (state.torn) and fails with *Damaged
// on anything an interrupted write cannot leave: a corrupt member, a bad
// line, records out of place, a wrong checksum or count.
func scan(r io.Reader) (state, error) {
	st := state{sum: newSum(), counts: newCounts()}
	cr := &countingReader{r: bufio.NewReaderSize(r, 64<<10)}
	// The gzip magic, or its first byte: a write cut after one byte.
	if magic, _ := cr.r.Peek(2); (len(magic) > 0 && magic[0] != 0x1f) || (len(magic) > 1 && magic[1] != 0x8b) {
		return st, &Damaged{Reason: "not a gzip file, so not an archive"}
	}
	zr := new(gzip.Reader)
	for {
		at := cr.n
		err := zr.Reset(cr)
		if err == io.EOF {
			return st, nil
		}
		if st.end != nil {
			return st, &Damaged{Offset: at, Reason: "data after the archive_end line"}
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				st.torn = err
				return st, nil
			}
			return st, &Damaged{Offset: at, Reason: err.Error()}
		}
		zr.Multistream(false)
		saved, err := st.sum.(encoding.BinaryMarshaler).MarshalBinary()
		if err != nil {
			return st, err
		}
		m, err := readMember(zr, &st)
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				if err := st.sum.(encoding.BinaryUnmarshaler).UnmarshalBinary(saved); err != nil {
					return st, err
				}
				st.torn = err
				return st, nil
			}
			return st, &Damaged{Offset: at, Reason: err.Error()}
		}
		st.validEnd = cr.n
		for k, n := range m.counts {
			st.counts[k] += n
		}
		if m.header != nil {
			st.header = m.header
		}
		st.end = m.end
		if l := m.last; l != nil {
			st.phase = l.Kind
			if l.MeterEvent != nil {
				st.after, err = meterEventCursor(l.MeterEvent)
			} else {
				st.after, err = eventCursor(l.Event)
			}
			if err != nil {
				return st, err
			}
		}
	}
}

// readMember reads one member's lines, hashing them into st.sum and
// checking each against what came before (st, as of the member's start).
func readMember(zr io.Reader, st *state) (member, error) {
	m := member{counts: map[string]int64{}}
	br := bufio.NewReaderSize(zr, 64<<10)
	phase, first := st.phase, st.header == nil
	for n := 1; ; n++ {
		b, err := readLine(br)
		if err == io.EOF {
			if n == 1 {
				return m, errors.New("an empty member")
			}
			return m, nil
		}
		if err != nil {
			return m, err
		}
		l, err := ParseLine(b[:len(b)-1])
		if err != nil {
			return m, fmt.Errorf("line %d of the member: %w", n, err)
		}
		if m.end != nil {
			return m, errors.New("a line after the archive_end line")
		}
		switch {
		case first && l.Kind != KindHeader:
			return m, errors.New("the first line is not the archive header")
		case !first && l.Kind == KindHeader:
			return m, errors.New("a second archive header")
		case l.Kind == KindMeterEvent && phase == KindEvent:
			return m, errors.New("a meter_event after the feed events")
		}
		first = false
		switch l.Kind {
		case KindHeader:
			m.header = l.Header
		case KindEnd:
			if got := hex.EncodeToString(st.sum.Sum(nil)); got != l.End.SHA256 {
				return m, fmt.Errorf("the lines' SHA-256 is %s, the archive_end line says %s", got, l.End.SHA256)
			}
			for k, want := range l.End.Counts {
				if got := st.counts[k] + m.counts[k]; got != want {
					return m, fmt.Errorf("%d %s records, the archive_end line says %d", got, k, want)
				}
			}
			m.end = l.End
			continue
		case KindMeterEvent:
			m.counts[KindMeterEvent]++
		case KindEvent:
			m.counts[KindEvent]++
			m.counts[CountDeliveries] += int64(len(l.Event.Deliveries))
			for _, d := range l.Event.Deliveries {
				m.counts[CountAttempts] += int64(len(d.History))
			}
		}
		st.sum.Write(b)
		if l.Kind == KindMeterEvent || l.Kind == KindEvent {
			phase = l.Kind
			m.last = &l
		}
	}
}

// readLine returns the next line with its newline, io.EOF at the end, and
// an error for a last line without a newline or one longer than MaxLine.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > MaxLine {
			return nil, fmt.Errorf("a line longer than %d bytes", MaxLine)
		}
		switch {
		case err == nil:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(line) == 0:
			return nil, io.EOF
		case err == io.EOF:
			return nil, errors.New("the member ends inside a line")
		default:
			return nil, err
		}
	}
}
