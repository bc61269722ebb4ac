package tune

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/pipeline"
)

// ErrNoSignal: a capture holds no frame the database decodes.
var ErrNoSignal = errors.New("tune: capture holds no decodable signal")

// Recording is a capture read once into memory, to be run through the
// pipeline once per candidate policy without reading or parsing it
// again: some 24 bytes a frame plus its payload. It also keeps what was
// observed of every signal: its values' spread and how its raw value
// steps (for its range and whether it is housekeeping).
type Recording struct {
	// Name names the capture in messages and the report.
	Name   string
	frames []stored
	data   []byte
	obs    []spread
	steps  []rawSteps
	last   []uint64
}

// stored is a frame without its payload, which is at data[off:off+Len].
type stored struct {
	time  int64
	off   uint32
	id    uint32
	flags frame.Flags
	bus   uint8
	len   uint8
}

// Record reads src to its end into a Recording named name. A capture
// none of whose frames carries a signal of db is an error wrapping
// ErrNoSignal.
func Record(ctx context.Context, name string, src capture.Source, db *dbc.Database) (*Recording, error) {
	n := len(db.Signals)
	r := &Recording{Name: name, obs: make([]spread, n), steps: make([]rawSteps, n), last: make([]uint64, n)}
	dec := decoder.New(db)
	vals := make([]decoder.Value, 0, dec.MaxSignals())
	var f frame.Frame
	values := 0
	for {
		err := src.Next(&f)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("tune: %s: %w", name, err)
		}
		if len(r.frames)%4096 == 0 && ctx.Err() != nil {
			return nil, fmt.Errorf("tune: %s: interrupted: %w", name, ctx.Err())
		}
		if len(r.data)+int(f.Len) > 1<<32-1 {
			return nil, fmt.Errorf("tune: %s: capture too large to hold (4 GiB of payload)", name)
		}
		r.frames = append(r.frames, stored{time: f.Time, off: uint32(len(r.data)), id: f.ID, flags: f.Flags, bus: f.Bus, len: f.Len})
		r.data = append(r.data, f.Payload()...)
		_, vals = dec.Decode(&f, vals[:0])
		for i := range vals {
			if vals[i].Flags&decoder.Truncated == 0 {
				r.observe(&vals[i])
				values++
			}
		}
	}
	if values == 0 {
		return nil, fmt.Errorf("%w: %s (%d frames)", ErrNoSignal, name, len(r.frames))
	}
	for _, s := range db.Signals {
		r.obs[s.Index].freeze(resolution(s))
	}
	return r, nil
}

// observe adds decoded value v to its signal's observations, as the
// tracker does in a run (tracker.Next, sigFid.setTruth).
func (r *Recording) observe(v *decoder.Value) {
	k := v.Signal.Index
	if r.obs[k].n > 0 {
		r.steps[k].add(r.last[k], v.Raw)
	}
	r.last[k] = v.Raw
	r.obs[k].add(truthOf(v))
}

// Frames returns how many frames the recording holds.
func (r *Recording) Frames() int { return len(r.frames) }

// source returns the recording's frames, from the first.
func (r *Recording) source() pipeline.Source { return &replay{r: r} }

type replay struct {
	r *Recording
	i int
}

func (p *replay) Next(f *frame.Frame) error {
	if p.i >= len(p.r.frames) {
		return io.EOF
	}
	s := &p.r.frames[p.i]
	p.i++
	*f = frame.Frame{Time: s.time, ID: s.id, Flags: s.flags, Bus: s.bus, Len: s.len}
	copy(f.Data[:], p.r.data[s.off:s.off+uint32(s.len)])
	return nil
}
