package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/pipeline"
)

// Window is one window-stream message a simulated car publishes.
type Window struct {
	// At is when the car publishes it, from the start of the drive:
	// the window's end, as the car sends a window once frame time
	// passes it.
	At time.Duration
	// Seq is its window seq; Values how many envelopes it holds.
	Seq    uint64
	Values int
	// Payload is the window message as the car's candec encodes it.
	Payload []byte
}

// Car is one simulated car's drive: its id and every window it
// publishes, in order.
type Car struct {
	ID    string
	Epoch uint64
	// Start is when the drive starts, in ns since the Unix epoch
	// (CarConfig.Start); a window is due at Start + At.
	Start   int64
	Windows []Window
}

// Values returns how many envelopes the car's windows hold.
func (c *Car) Values() int {
	n := 0
	for i := range c.Windows {
		n += c.Windows[i].Values
	}
	return n
}

// Bytes returns the bytes of the car's window payloads.
func (c *Car) Bytes() int {
	n := 0
	for i := range c.Windows {
		n += len(c.Windows[i].Payload)
	}
	return n
}

// ReadFrames reads every frame of a capture.
func ReadFrames(ctx context.Context, path string) ([]frame.Frame, error) {
	src, err := capture.OpenContext(ctx, path, capture.Options{})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	var fs []frame.Frame
	for {
		var f frame.Frame
		switch err := src.Next(&f); {
		case errors.Is(err, io.EOF):
			if len(fs) < 2 {
				return nil, fmt.Errorf("fleet: %s holds %d frames, want at least 2", path, len(fs))
			}
			return fs, nil
		case err != nil:
			return nil, fmt.Errorf("fleet: %s: %w", path, err)
		}
		fs = append(fs, f)
	}
}

// CarConfig says what the simulated cars drive.
type CarConfig struct {
	// DB decodes Frames; Policies are the car's (nil: the default).
	DB       *dbc.Database
	Policies *pipeline.PolicyFile
	// Frames is the capture every car replays, each from a point of its
	// own and looping, for Drive.
	Frames []frame.Frame
	Drive  time.Duration
	// Start is the wall-clock time the drives start at, in ns since the
	// Unix epoch: a frame's time is Start plus its time into the drive,
	// so that an envelope's ts says when it would have been sent.
	Start int64
	// Seed makes the cars' variations (their starting frame).
	Seed uint64
	// Window is the window stream's period (the car's window_period);
	// 0 is pipeline.DefaultWindowPeriod.
	Window time.Duration
}

// NewCar makes car i's drive: the capture from a starting frame drawn
// from the seed, looped, re-timed to start at cfg.Start, decoded and
// published by candec's own engine with the window stream on.
func NewCar(cfg CarConfig, i int) (Car, error) {
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(i)))
	epoch := uint64(cfg.Start) + uint64(i) // a start of its own per car
	car := Car{ID: fmt.Sprintf("car%05d", i), Epoch: epoch, Start: cfg.Start}
	var w envelope.Window
	var perr error
	eng, err := pipeline.New(cfg.DB, pipeline.Config{Policies: cfg.Policies, Epoch: epoch,
		Window: &pipeline.WindowConfig{Period: cfg.Window}}, pipeline.SinkFunc(func(o *pipeline.Out) {
		if o.Kind != pipeline.KindWindow {
			return
		}
		if err := envelope.ParseWindow(o.Payload, &w); err != nil && perr == nil {
			perr = fmt.Errorf("fleet: car %d: window %d: %w", i, o.Seq, err)
		}
		car.Windows = append(car.Windows, Window{At: time.Duration(w.End - cfg.Start),
			Seq: o.Seq, Values: len(w.Items), Payload: append([]byte(nil), o.Payload...)})
	}))
	if err != nil {
		return Car{}, err
	}
	fs := cfg.Frames
	k := rng.IntN(len(fs))
	t := cfg.Start
	end := cfg.Start + int64(cfg.Drive)
	for j := 0; t < end; j++ {
		f := fs[(k+j)%len(fs)]
		if j > 0 {
			prev := fs[(k+j-1)%len(fs)]
			t += gap(prev.Time, f.Time)
		}
		f.Time = t
		eng.Frame(&f)
	}
	eng.Flush(end)
	return car, perr
}

// gap is the time from a frame at a to the next at b; the loop's seam
// (b before a) and a jump over a second take a 1 ms gap.
func gap(a, b int64) int64 {
	if d := b - a; d >= 0 && d <= int64(time.Second) {
		return d
	}
	return int64(time.Millisecond)
}
