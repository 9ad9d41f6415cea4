package archive

import (
	"errors"
	"fmt"
	"os"
)

// Verify checks the archive at path: every gzip member whole (each has its
// own CRC), every line a well-formed record in its place, and the end line's
// SHA-256 and counts equal to the lines'. A file cut short, altered, or
// without its end line is an error saying which.
func Verify(path string) (Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return Summary{}, err
	}
	defer f.Close()
	st, err := scan(f)
	var d *Damaged
	switch {
	case errors.As(err, &d):
		return Summary{}, fmt.Errorf("%s is not a valid archive: %w", path, err)
	case err != nil:
		return Summary{}, fmt.Errorf("%s: %w", path, err)
	case st.torn != nil:
		return Summary{}, fmt.Errorf("%s is truncated: it ends inside a gzip member after byte %d (an interrupted archive run? run it again with the same options to finish the file)", path, st.validEnd)
	case st.header == nil:
		return Summary{}, fmt.Errorf("%s is empty, not an archive", path)
	case st.end == nil:
		return Summary{}, fmt.Errorf("%s is incomplete: it has no archive_end line after %d records (an interrupted archive run? run it again with the same options to finish the file)", path, st.counts[KindMeterEvent]+st.counts[KindEvent])
	}
	return Summary{Path: path, Since: st.header.Since, Before: st.header.Before, MerchantID: st.header.MerchantID, Counts: st.end.Counts, SHA256: st.end.SHA256, Bytes: st.validEnd}, nil
}
