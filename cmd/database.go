package cmd

import (
	"context"
	"errors"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/internal/pgcluster"
	"github.com/tollgatehq/tollgate/internal/store"
)

// dbFlags adds the flags every command that opens the database shares.
func dbFlags(cmd *cobra.Command) {
	cmd.Flags().String("database-url", "", "PostgreSQL URL (default: the embedded cluster under --data-dir)")
	cmd.Flags().String("data-dir", "", "data directory of the embedded default (default $XDG_DATA_HOME/tollgate)")
}

// database is an open database and, for the embedded default, its cluster.
type database struct {
	DB       *store.DB
	Embedded bool
	cluster  *pgcluster.Cluster
}

// openDatabase opens --database-url, or starts (or attaches to) the embedded
// cluster under --data-dir. Migrations are applied when migrate is true.
func (f *Factory) openDatabase(ctx context.Context, log *slog.Logger, migrate bool) (*database, error) {
	d := &database{}
	url := f.v.GetString("database_url")
	if url == "" {
		dir := f.v.GetString("data_dir")
		if dir == "" {
			dir = DataDir()
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		d.cluster = pgcluster.New(dir, log)
		if _, err := d.cluster.Start(ctx); err != nil {
			return nil, err
		}
		d.Embedded = true
		url = d.cluster.URL(pgcluster.Database)
	}
	db, err := store.Open(ctx, url)
	if err != nil {
		d.Close(ctx)
		return nil, err
	}
	d.DB = db
	if migrate {
		if err := store.Migrate(ctx, db.DB.DB); err != nil {
			d.Close(ctx)
			return nil, err
		}
	}
	return d, nil
}

// Close closes the pool and ends this process's use of the embedded
// cluster, which stops it unless another process (a second daemon, an admin
// command) is still using it: a command never pulls the database out from
// under a running daemon, and whoever leaves last, a daemon restarted after
// a crash included, stops it.
func (d *database) Close(ctx context.Context) error {
	var errs []error
	if d.DB != nil {
		errs = append(errs, d.DB.Close())
	}
	if d.cluster != nil {
		errs = append(errs, d.cluster.Release(context.WithoutCancel(ctx)))
	}
	return errors.Join(errs...)
}

// newLogger returns the structured logger commands log with, on stderr,
// from level up (debug with --debug).
func (f *Factory) newLogger(level slog.Level) *slog.Logger {
	if f.v.GetBool("debug") {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(f.IO.Err, &slog.HandlerOptions{Level: level}))
}

func newMigrateCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply pending database migrations and exit",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := f.newLogger(slog.LevelInfo)
			d, err := f.openDatabase(cmd.Context(), log, true)
			if err != nil {
				return err
			}
			defer d.Close(cmd.Context())
			log.Info("migrations applied")
			return nil
		},
	}
	dbFlags(cmd)
	return cmd
}
