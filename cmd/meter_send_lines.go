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

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/id"
)

// This file is `meter send`'s input side: reading JSON lines and giving
// each line the idempotency key it is sent with.

// maxLine bounds one JSON line (a batch body may be 8 MiB).
const maxLine = 1 << 20

// sendLine is one input line ready to send.
type sendLine struct {
	n    int // 1-based line number
	body json.RawMessage
	own  bool // the line carried its own idempotency_key
}

// openLines opens --file and works out the namespace of the keys given to
// lines without one: the input's identity when keys are derived, else one
// made up for this run (its own retries stay safe; a rerun is new events).
func openLines(f *Factory, o *meterSendOptions) (r io.Reader, total int, prefix string, closeFn func(), err error) {
	runPrefix := "run_" + id.Random(22)
	if o.File == "-" {
		prefix = runPrefix
		if o.Idempotent {
			prefix = o.KeyPrefix
		}
		return f.IO.In, -1, prefix, func() {}, nil
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
	switch {
	case !o.Idempotent:
		prefix = runPrefix
	case o.KeyPrefix != "":
		prefix = o.KeyPrefix
	default:
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
		body, own, err := withKey(prefix, lineNo, raw)
		if err != nil {
			reject(lineErrorOut{Line: lineNo, Code: client.CodeInvalidJSON, Message: err.Error()})
			continue
		}
		batch = append(batch, sendLine{n: lineNo, body: body, own: own})
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
// its own (own is true), or one derived from prefix, the line number and
// the line.
func withKey(prefix string, lineNo int, raw string) (body json.RawMessage, own bool, err error) {
	if !strings.HasPrefix(raw, "{") {
		return nil, false, errors.New("line is not a JSON object")
	}
	var head struct {
		IdempotencyKey json.RawMessage `json:"idempotency_key"`
	}
	if err := json.Unmarshal([]byte(raw), &head); err != nil {
		return nil, false, fmt.Errorf("line is not valid JSON: %v", err)
	}
	if head.IdempotencyKey != nil && string(head.IdempotencyKey) != "null" {
		return json.RawMessage(raw), true, nil
	}
	sum := sha256.Sum256([]byte(prefix + "\x00" + strconv.Itoa(lineNo) + "\x00" + raw))
	key := `"idempotency_key":"ln_` + hex.EncodeToString(sum[:20]) + `"`
	rest := strings.TrimSpace(raw[1:])
	if rest == "}" {
		return json.RawMessage("{" + key + "}"), false, nil
	}
	return json.RawMessage("{" + key + "," + rest), false, nil
}
