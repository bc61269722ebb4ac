package ingest

import (
	"github.com/yukart/candec/internal/fleet/lake"
)

// timeFits reports whether ts is a time the lake's time column holds.
func timeFits(ts int64) bool { return ts >= lake.MinTime && ts < lake.MaxTime }

// openedLake is an open lake as the ingest uses it: the tests give
// one of their own.
type openedLake struct {
	store     lake.Store
	newWriter func(prefix string) tableWriter
	close     func() error
}

// openLake opens cfg's lake, shared with the other instances (its
// owner is the instance's id).
func openLake(cfg Config) (openedLake, error) {
	l, err := lake.Open(lake.Config{Dir: cfg.Dir, Store: cfg.Store, DBC: cfg.DBCHash, Owner: cfg.ID, PolicyColumn: true})
	if err != nil {
		return openedLake{}, err
	}
	return openedLake{
		store:     l.Store(),
		newWriter: func(prefix string) tableWriter { return l.NewWriterIn(prefix) },
		close:     l.Close,
	}, nil
}
