package plot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/base/defaults"
	"github.com/yukart/candec/pipeline"
)

// Errors.
var (
	// ErrNoMatch: the glob matches no signal of the DBC.
	ErrNoMatch = errors.New("plot: no signal matches")
	// ErrNoFrames: no frame of the capture carries the signals.
	ErrNoFrames = errors.New("plot: no frames in the capture carry")
	// ErrTooMany: the glob matches more signals than a picture shows.
	ErrTooMany = errors.New("plot: too many signals")
)

// DefaultMaxSignals is how many signals a picture shows at most: beyond
// it the panels are too small to read.
const DefaultMaxSignals = 16

// Config says what to plot.
type Config struct {
	// DB decodes the frames.
	DB *dbc.Database
	// Signals is a glob (path.Match) on a signal's name or its
	// "Message.Signal" name; "" matches every signal.
	Signals string
	// Policy, if not nil, adds what the service would publish under it.
	Policy *pipeline.PolicyFile
	// MaxSignals caps the signals matched (0: DefaultMaxSignals).
	MaxSignals int
}

// Point is one value at a time, in seconds since the capture's first
// frame.
type Point struct{ T, V float64 }

// Series is one signal's values.
type Series struct {
	Signal *dbc.Signal
	// Raw is every decoded value; Published what the policy would
	// publish (nil without a policy).
	Raw, Published []Point
}

// Data is what Collect found.
type Data struct {
	// Series are the matched signals that frames carried, in the DBC's
	// order.
	Series []*Series
	// Missing are the matched signals no frame carried.
	Missing []*dbc.Signal
	// Policy names the policy of Published ("" without one).
	Policy string
}

// Match returns the signals of db that glob matches, in the DBC's order.
func Match(db *dbc.Database, glob string) ([]*dbc.Signal, error) {
	glob = cmp.Or(glob, "*")
	if _, err := path.Match(glob, ""); err != nil {
		return nil, fmt.Errorf("plot: --signals %q: %w", glob, err)
	}
	var out []*dbc.Signal
	for _, s := range db.Signals {
		a, _ := path.Match(glob, s.Name)
		b, _ := path.Match(glob, s.FullName())
		if a || b {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w %q (a glob on the signal's name or Message.Signal, such as \"*Speed*\"; `candec dbc` lists them)", ErrNoMatch, glob)
	}
	return out, nil
}

// Collect reads src to its end and keeps the values of the signals
// cfg.Signals matches. It fails when no frame carried any of them; the
// ones some frame carried come back, the rest in Data.Missing.
func Collect(ctx context.Context, src capture.Source, cfg Config) (*Data, error) {
	sigs, err := Match(cfg.DB, cfg.Signals)
	if err != nil {
		return nil, err
	}
	max := cfg.MaxSignals
	max = defaults.Positive(max, DefaultMaxSignals)
	if len(sigs) > max {
		return nil, fmt.Errorf("%w: %q matches %d signals, a picture shows at most %d; narrow the glob", ErrTooMany, cfg.Signals, len(sigs), max)
	}
	series := make(map[int]*Series, len(sigs))
	for _, s := range sigs {
		series[s.Index] = &Series{Signal: s}
	}
	rec := &recorder{Source: src, dec: decoder.New(cfg.DB), series: series, t0: -1}
	rec.vals = make([]decoder.Value, 0, rec.dec.MaxSignals())
	d := &Data{}
	if cfg.Policy == nil {
		var f frame.Frame
		for {
			if err := rec.Next(&f); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return nil, fmt.Errorf("plot: %w", err)
			}
			if rec.frames%4096 == 0 && ctx.Err() != nil {
				return nil, fmt.Errorf("plot: %w", ctx.Err())
			}
		}
	} else {
		d.Policy = filepath.Base(cfg.Policy.Name())
		eng, err := pipeline.New(cfg.DB, pipeline.Config{Policies: cfg.Policy}, pipeline.SinkFunc(func(o *pipeline.Out) {
			if o.Signal == nil || o.Env == nil || rec.t0 < 0 {
				return
			}
			if s := series[o.Signal.Index]; s != nil && !o.Env.Stale() {
				s.Published = append(s.Published, Point{T: float64(o.TS-rec.t0) / 1e9, V: o.Env.Float64()})
			}
		}))
		if err != nil {
			return nil, fmt.Errorf("plot: %w", err)
		}
		if _, err := pipeline.RunOffline(ctx, rec, eng, pipeline.OfflineOptions{}); err != nil {
			return nil, fmt.Errorf("plot: %w", err)
		}
	}
	for _, s := range sigs {
		if ser := series[s.Index]; len(ser.Raw) > 0 {
			if cfg.Policy != nil && ser.Published == nil {
				ser.Published = []Point{} // a policy that published nothing: still a series
			}
			d.Series = append(d.Series, ser)
		} else {
			d.Missing = append(d.Missing, s)
		}
	}
	if len(d.Series) == 0 {
		return nil, fmt.Errorf("%w %s", ErrNoFrames, describe(d.Missing))
	}
	return d, nil
}

// describe names signals with their message and ID, so a user can look
// for the frames: "Speed (message VCU, ID 0x0A0)".
func describe(sigs []*dbc.Signal) string {
	parts := make([]string, 0, len(sigs))
	for i, s := range sigs {
		if i == 8 {
			parts = append(parts, fmt.Sprintf("and %d more", len(sigs)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (message %s, ID 0x%03X)", s.Name, s.Message.Name, s.Message.ID))
	}
	return strings.Join(parts, ", ")
}

// MissingText says which matched signals no frame carried, for a warning
// beside a picture of the others; "" when none.
func (d *Data) MissingText() string {
	if len(d.Missing) == 0 {
		return ""
	}
	return "no frames in the capture carry " + describe(d.Missing)
}

// recorder is a capture.Source that decodes every frame it passes on and
// keeps the values of the signals in series.
type recorder struct {
	capture.Source
	dec    *decoder.Decoder
	vals   []decoder.Value
	series map[int]*Series
	t0     int64
	frames int
}

func (r *recorder) Next(f *frame.Frame) error {
	if err := r.Source.Next(f); err != nil {
		return err
	}
	r.frames++
	if r.t0 < 0 {
		r.t0 = f.Time
	}
	_, r.vals = r.dec.Decode(f, r.vals)
	for i := range r.vals {
		v := &r.vals[i]
		if v.Flags&decoder.Truncated != 0 {
			continue
		}
		if s := r.series[v.Signal.Index]; s != nil {
			s.Raw = append(s.Raw, Point{T: float64(f.Time-r.t0) / 1e9, V: v.Phys})
		}
	}
	return nil
}
