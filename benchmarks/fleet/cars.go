package fleet

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/pipeline"
)

// Window is one window-stream message a simulated car publishes.
type Window struct {
	// At is when the car publishes it, from the start of the drive:
	// the window's end, as the car sends a window once frame time
	// passes it.
	At time.Duration
	// Seq is its window seq; Values how many envelopes it holds;
	// Policy the campaign version it carries (its "policy", 0 for none).
	Seq    uint64
	Values int
	Policy uint64
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
	// live is the car's engine where its drive was made only up to
	// CarConfig.LiveFrom: the run makes the rest (live.go).
	live *liveDrive
}

// Values returns how many envelopes the car's windows hold.
func (c *Car) Values() int {
	n := 0
	for i := range c.Windows {
		n += c.Windows[i].Values
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
	// LiveFrom, when > 0, is the point of the drive (from Start) up to
	// which the drive of a car Live names is made before the run; the
	// car keeps its engine and makes the rest during the run, so that
	// a campaign it takes then changes what it publishes next.
	LiveFrom time.Duration
	Live     func(id string) bool
}

// NewCar makes car i's drive: the capture from a starting frame drawn
// from the seed, looped, re-timed to start at cfg.Start, decoded and
// published by candec's own engine with the window stream on.
func NewCar(cfg CarConfig, i int) (Car, error) {
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(i)))
	epoch := uint64(cfg.Start) + uint64(i) // a start of its own per car
	car := Car{ID: CarID(i), Epoch: epoch, Start: cfg.Start}
	d := &liveDrive{start: cfg.Start, period: int64(cmp.Or(cfg.Window, pipeline.DefaultWindowPeriod))}
	eng, err := pipeline.New(cfg.DB, pipeline.Config{Policies: cfg.Policies, Epoch: epoch,
		Window: &pipeline.WindowConfig{Period: cfg.Window}}, pipeline.SinkFunc(d.take))
	if err != nil {
		return Car{}, err
	}
	d.eng = eng
	d.frames = newReplay(cfg.Frames, rng.IntN(len(cfg.Frames)), cfg.Start, cfg.Start+int64(cfg.Drive))
	if cfg.LiveFrom > 0 && cfg.Live != nil && cfg.Live(car.ID) {
		d.runTo(cfg.Start + int64(cfg.LiveFrom))
		car.live = d
	} else {
		d.finish()
	}
	if d.err != nil {
		return Car{}, fmt.Errorf("fleet: car %d: %w", i, d.err)
	}
	car.Windows = d.windows
	return car, nil
}

// CarID is the vehicle id of car i: car00000, car00001, …
func CarID(i int) string { return fmt.Sprintf("car%05d", i) }

// replay is a car's frames: the capture from frame k on, looped and
// re-timed from start, until a frame at or past end.
type replay struct {
	fs     []frame.Frame
	k, j   int
	t, end int64
	// next is the next frame, while ok.
	next frame.Frame
	ok   bool
}

func newReplay(fs []frame.Frame, k int, start, end int64) *replay {
	r := &replay{fs: fs, k: k, t: start, end: end}
	r.load()
	return r
}

// load makes next the following frame, unless the previous one was at
// or past the end.
func (r *replay) load() {
	if r.ok = r.t < r.end; !r.ok {
		return
	}
	n := len(r.fs)
	f := r.fs[(r.k+r.j)%n]
	if r.j > 0 {
		r.t += gap(r.fs[(r.k+r.j-1)%n].Time, f.Time)
	}
	f.Time = r.t
	r.next = f
	r.j++
}

// gap is the time from a frame at a to the next at b; the loop's seam
// (b before a) and a jump over a second take a 1 ms gap.
func gap(a, b int64) int64 {
	if d := b - a; d >= 0 && d <= int64(time.Second) {
		return d
	}
	return int64(time.Millisecond)
}
