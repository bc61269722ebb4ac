package parquetrow

import (
	"context"
	"io"

	"github.com/yukart/candec/internal/cmdkit/outformat"
	"github.com/yukart/candec/internal/fleet/lake"
	"github.com/yukart/candec/internal/fleet/lake/s3store"
)

func init() {
	outformat.Register(outformat.Format{
		Name:   "parquet",
		Ext:    ".parquet",
		Binary: true,
		Note:   "long form, needs -o",
		New: func(w io.Writer, dbc func() (string, error)) (outformat.Sink, error) {
			h, err := dbc()
			if err != nil {
				return nil, err
			}
			return lake.NewLong(w, map[string]string{lake.MetaDBC: h}), nil
		},
		OpenLake: func(cfg outformat.LakeConfig) (outformat.Lake, error) {
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

// parquetLake is a lake.Lake as an outformat.Lake.
type parquetLake struct{ *lake.Lake }

func (l parquetLake) NewWriter() outformat.LakeWriter { return l.Lake.NewWriter() }
