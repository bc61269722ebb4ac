//go:build !car

package outformat

import (
	"context"
	"io"

	"github.com/yukart/candec/internal/lake"
	"github.com/yukart/candec/internal/lake/s3store"
)

// The Parquet row: a long Parquet file (-o), or a data lake of a table
// per message (--out-dir: a directory, or s3://bucket/prefix in object
// storage, internal/lake/s3store). Only the developer's build has it: the car
// does not analyse its own data, so its build links no parquet-go.
func init() {
	formats = append(formats, Format{
		Name:   "parquet",
		Ext:    ".parquet",
		Binary: true,
		Note:   "long form, needs -o",
		New: func(w io.Writer, dbc func() (string, error)) (Sink, error) {
			h, err := dbc()
			if err != nil {
				return nil, err
			}
			return lake.NewLong(w, map[string]string{lake.MetaDBC: h}), nil
		},
		OpenLake: func(cfg LakeConfig) (Lake, error) {
			ctx := cfg.Context
			if ctx == nil {
				ctx = context.Background()
			}
			var opt s3store.Options
			if cfg.Log != nil {
				opt.Retried = s3store.RetryLine(cfg.Log)
			}
			st, err := s3store.LakeStore(ctx, cfg.Dir, opt) // nil for a directory
			if err != nil {
				return nil, err
			}
			lk, err := lake.Open(lake.Config{Dir: cfg.Dir, Store: st, DBC: cfg.DBC, Signals: cfg.Signals})
			if err != nil {
				return nil, err
			}
			return parquetLake{lk}, nil
		},
	})
}

// parquetLake is a lake.Lake as a Lake.
type parquetLake struct{ *lake.Lake }

func (l parquetLake) NewWriter() LakeWriter { return l.Lake.NewWriter() }
