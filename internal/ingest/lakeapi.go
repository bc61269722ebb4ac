package ingest

import (
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/lake"
)

// escape is the lake's escape of a name into a path element.
func escape(s string) string { return lake.Escape(s) }

// dayOf is the UTC day of ts, as the lake partitions it; dayDate that
// day's date= partition.
func dayOf(ts int64) int64 { return lake.Day(ts) }

func dayDate(day int64) string { return lake.DayDate(day) }

// timeFits reports whether ts is a time the lake's time column holds.
func timeFits(ts int64) bool { return ts >= lake.MinTime && ts < lake.MaxTime }

// integerColumn reports whether the lake writes s as an INT64 column.
func integerColumn(s *dbc.Signal) bool { return lake.IntegerColumn(s) }

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
	l, err := lake.Open(lake.Config{Dir: cfg.Dir, Store: cfg.Store, DBC: cfg.DBCHash, Owner: cfg.ID})
	if err != nil {
		return openedLake{}, err
	}
	return openedLake{
		store:     l.Store(),
		newWriter: func(prefix string) tableWriter { return l.NewWriterIn(prefix) },
		close:     l.Close,
	}, nil
}
