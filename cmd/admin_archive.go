package cmd

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/internal/archive"
	"github.com/tollgatehq/tollgate/internal/audit"
)

// newAdminArchiveCmd is `admin archive`: write old usage events and feed
// events to a file before retention drops them, and `admin archive verify`.
func newAdminArchiveCmd(f *Factory, withDBFlags func(*cobra.Command) *cobra.Command) *cobra.Command {
	var since, before, out, merchant string
	var batch int
	cmd := &cobra.Command{
		Use:   "archive --before DATE --out FILE [--since DATE] [--merchant ID]",
		Short: "Write usage events and feed events older than a date to a gzip JSON lines file, with a checksum",
		Long: `Write every usage event (meter event) whose timestamp is before DATE, and every
feed event recorded before DATE with its webhook deliveries and their attempts,
to FILE: gzip-compressed JSON lines, one record a line, each with a "kind"
(meter_event or event) and the API's field names, between a header line and an
archive_end line holding the SHA-256 of the lines and the count of each kind.
DATE is a day (2025-01-01, midnight UTC) or an RFC 3339 time. --since DATE
leaves out what is older: archives of consecutive periods do not overlap.

The command reads in batches and deletes nothing. If it is interrupted (a
crash, kill -9, a full disk), run it again with the same arguments: it keeps
what was written, goes on from the last whole batch, and ends with the file an
uninterrupted run would have written. It refuses a FILE that is something else,
or an archive of other arguments.

Then check the file with "tollgate admin archive verify FILE" and keep it
somewhere safe; only then let "serve --retention" drop the old rows. Usage
summaries, entitlement checks and upcoming charges keep answering for the
dropped periods from their hourly and daily aggregates.`,
		Example: `  tollgate admin archive --before 2025-01-01 --out usage-2024.jsonl.gz
  tollgate admin archive --since 2025-01-01 --before 2025-02-01 --out 2025-01.jsonl.gz
  tollgate admin archive --before 2025-01-01 --out acme-2024.jsonl.gz --merchant mch_… --json
  tollgate admin archive verify usage-2024.jsonl.gz
  zcat usage-2024.jsonl.gz | jq -c 'select(.kind == "meter_event") | {id, value}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("before") && !cmd.Flags().Changed("out") {
				// Alone, it is the group of archive and verify, and says so.
				return cmd.Help()
			}
			at, err := parseArchiveDate("--before", before)
			if err != nil {
				return err
			}
			var from time.Time
			if since != "" {
				if from, err = parseArchiveDate("--since", since); err != nil {
					return err
				}
				if !from.Before(at) {
					return usageError("--since must be before --before")
				}
			}
			if out == "" {
				return usageError("--out is required: the file to write")
			}
			if batch < 1 || batch > 100_000 {
				return usageError("--batch must be from 1 to 100000")
			}
			return f.withDB(cmd.Context(), func(d *database) error {
				last := time.Now()
				progress := func(kind string, n int64) {
					if f.IO.ErrIsTerminal && time.Since(last) > 2*time.Second {
						last = time.Now()
						fmt.Fprintf(f.IO.Err, "archive: %d %s records written\n", n, kind)
					}
				}
				sum, err := archive.Write(cmd.Context(), d.DB, out, archive.Options{Since: from, Before: at, MerchantID: merchant, Batch: batch}, progress)
				if err != nil {
					return err
				}
				if sum.AlreadyComplete {
					fmt.Fprintf(f.IO.Err, "%s was already a whole archive of these arguments; nothing written.\n", out)
				} else {
					if sum.Resumed > 0 {
						fmt.Fprintf(f.IO.Err, "Resumed %s after the %d records an earlier run had written.\n", out, sum.Resumed)
					}
					err := auditedAfter(cmd.Context(), d, audit.Entry{MerchantID: merchant, Action: audit.ArchiveWrite, Target: out,
						Detail: fmt.Sprintf("%s: %d usage events, %d feed events; sha256 %s", archiveSpan(sum), sum.Counts[archive.KindMeterEvent], sum.Counts[archive.KindEvent], sum.SHA256)})
					if err != nil {
						return err
					}
				}
				return printArchiveSummary(f, sum, "Archived")
			})
		},
	}
	cmd.Flags().StringVar(&before, "before", "", "archive what is older than this day (2025-01-01) or RFC 3339 time")
	cmd.Flags().StringVar(&since, "since", "", "and not older than this day or time (default: everything before --before)")
	cmd.Flags().StringVar(&out, "out", "", "the file to write (.jsonl.gz)")
	cmd.Flags().StringVar(&merchant, "merchant", "", "only this merchant's records (default every merchant's)")
	cmd.Flags().IntVar(&batch, "batch", archive.DefaultBatch, "records per batch (a resumed run must use the same)")
	withDBFlags(cmd)
	cmd.AddCommand(newAdminArchiveVerify(f))
	return cmd
}

func newAdminArchiveVerify(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "verify FILE",
		Short: "Check an archive: gzip integrity, every line, the checksum and the counts",
		Long: `Check an archive written by "tollgate admin archive": every gzip member
whole, every line a well-formed record in its place, and the SHA-256 and the
counts of its archive_end line equal to the lines'. It exits non-zero saying
what is wrong: truncated (an interrupted run: run the archive command again
with the same arguments), altered, or incomplete. It reads only the file.`,
		Example: `  tollgate admin archive verify usage-2024.jsonl.gz
  tollgate admin archive verify usage-2024.jsonl.gz --json`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sum, err := archive.Verify(args[0])
			if err != nil {
				return err
			}
			return printArchiveSummary(f, sum, "Verified")
		},
	}
}

func printArchiveSummary(f *Factory, s archive.Summary, verb string) error {
	if f.JSON() {
		return writeJSONTo(f.IO.Out, s)
	}
	merchant := "every merchant"
	if s.MerchantID != nil {
		merchant = *s.MerchantID
	}
	fmt.Fprintf(f.IO.Out, "%s %s: %d usage events and %d feed events (%d webhook deliveries, %d attempts) of %s %s.\n",
		verb, s.Path, s.Counts[archive.KindMeterEvent], s.Counts[archive.KindEvent], s.Counts[archive.CountDeliveries],
		s.Counts[archive.CountAttempts], merchant, archiveSpan(s))
	fmt.Fprintf(f.IO.Out, "%d bytes, sha256 of the lines %s\n", s.Bytes, s.SHA256)
	return nil
}

// archiveSpan is the time span of an archive, in words.
func archiveSpan(s archive.Summary) string {
	if s.Since != nil {
		return "from " + *s.Since + " before " + s.Before
	}
	return "before " + s.Before
}

// parseArchiveDate reads --before or --since: a day (midnight UTC) or an
// RFC 3339 time.
func parseArchiveDate(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, usageError("--before is required: archive what is older than this date (2025-01-01)")
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, usageError("%s must be a day (2025-01-01) or an RFC 3339 time (2025-01-01T00:00:00Z), not %q", flag, s)
	}
	return t.UTC(), nil
}
