package replay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/rawbatch"
)

// DefaultWindow is the batching window, the bridge's.
const DefaultWindow = 10 * time.Millisecond

// The speeds a replay plays at. Below MinSpeed a capture of seconds takes
// days; above MaxSpeed the timing is finer than the clock can keep, and
// Flood says that better. Outside them the arithmetic of due times
// overflows (a speed of 1e-300 put every frame at once).
const (
	MinSpeed = 0.001
	MaxSpeed = 1000
)

// The window's bounds: a batch per 100 µs is already one per frame on a
// busy bus, and a window of seconds is no longer a bridge's batching.
const (
	MinWindow = 100 * time.Microsecond
	MaxWindow = 10 * time.Second
)

// Reasons a frame or a line is skipped: the keys of Stats.SkippedBy.
const (
	// SkipFD: CAN FD frames, which wire format v1 cannot carry.
	SkipFD = "can_fd"
	// SkipUnencodable: other frames wire format v1 cannot carry (an ID
	// wider than its format, a data length over 8).
	SkipUnencodable = "unencodable"
	// SkipMalformed: malformed capture lines, skipped by a source that
	// skips them (capture.Options.SkipInvalid).
	SkipMalformed = "malformed_line"
)

// ErrOptions: the options cannot be used.
var ErrOptions = errors.New("replay: bad options")

// Opener opens the capture; Run calls it once per pass (again for each
// loop) and closes the source after the pass when it is an io.Closer.
type Opener func() (capture.Source, error)

// Publisher sends one raw batch. batch is valid only during the call.
type Publisher interface {
	Publish(ctx context.Context, batch []byte) error
}

// PublisherFunc adapts a function to Publisher.
type PublisherFunc func(ctx context.Context, batch []byte) error

// Publish calls f.
func (f PublisherFunc) Publish(ctx context.Context, batch []byte) error { return f(ctx, batch) }

// Clock is the time a replay follows. The zero Options use the wall
// clock; tests pass a clock whose SleepUntil only moves Now.
type Clock interface {
	Now() time.Time
	// SleepUntil returns at t, or with ctx's error when ctx ends first.
	SleepUntil(ctx context.Context, t time.Time) error
}

// Options choose how a capture is played.
type Options struct {
	// Speed plays the capture that many times faster, from MinSpeed to
	// MaxSpeed; 0 means 1, the capture's own timing. Ignored with Flood.
	Speed float64
	// Window is the batching window, from MinWindow to MaxWindow; 0
	// means DefaultWindow. Ignored with PerFrame.
	Window time.Duration
	// PerFrame sends every frame in a batch of its own.
	PerFrame bool
	// Loop starts the capture again when it ends, until ctx ends.
	Loop bool
	// Flood sends as fast as the publisher takes the batches, ignoring
	// the capture's timing.
	Flood bool
	// FirstSeq is the seq of the first frame.
	FirstSeq uint64
	// Clock is the time to follow; nil means the wall clock.
	Clock Clock
}

// Stats count what a replay did.
type Stats struct {
	// Frames and Batches sent (published or failed).
	Frames  uint64 `json:"frames"`
	Batches uint64 `json:"batches"`
	// Failed counts batches the publisher refused; FailedFrames the
	// frames in them, which are lost.
	Failed       uint64 `json:"failed"`
	FailedFrames uint64 `json:"failed_frames"`
	// Skipped counts frames the wire format cannot carry and malformed
	// lines the source skipped; SkippedBy counts them by reason (Skip…).
	Skipped   uint64            `json:"skipped"`
	SkippedBy map[string]uint64 `json:"skipped_by,omitempty"`
	// Loops counts completed passes over the capture.
	Loops uint64 `json:"loops"`
	// NextSeq is the seq the next frame would have had.
	NextSeq uint64 `json:"next_seq"`
	// LastError is the last publish error, if any.
	LastError string `json:"last_error,omitempty"`
}

// Run plays the capture until it ends (every pass, with Loop, until ctx
// ends). When ctx ends it sends the batch it was filling and returns the
// stats and nil: ending a replay is not an error. It returns an error
// when the capture cannot be opened or read, or is empty.
func Run(ctx context.Context, open Opener, pub Publisher, opts Options) (Stats, error) {
	opts.Speed = cmp.Or(opts.Speed, 1)
	opts.Window = cmp.Or(opts.Window, DefaultWindow)
	switch {
	case !opts.Flood && !(opts.Speed >= MinSpeed && opts.Speed <= MaxSpeed):
		return Stats{}, fmt.Errorf("%w: speed %g is outside %g to %g", ErrOptions, opts.Speed, float64(MinSpeed), float64(MaxSpeed))
	case !opts.PerFrame && (opts.Window < MinWindow || opts.Window > MaxWindow):
		return Stats{}, fmt.Errorf("%w: window %v is outside %v to %v", ErrOptions, opts.Window, MinWindow, MaxWindow)
	}
	if opts.Clock == nil {
		opts.Clock = newWallClock()
	}
	r := &player{opts: opts, pub: pub, clock: opts.Clock}
	r.enc.Reset(opts.FirstSeq)
	err := r.run(ctx, open)
	// What the window holds goes out, even after ctx ended.
	r.flush(context.WithoutCancel(ctx))
	r.stats.NextSeq = r.enc.Seq()
	if errors.Is(err, ctx.Err()) && ctx.Err() != nil {
		err = nil
	}
	return r.stats, err
}

// player is one replay's state.
type player struct {
	opts  Options
	pub   Publisher
	clock Clock
	enc   rawbatch.Encoder
	buf   []byte
	stats Stats

	start     time.Time // the replay's time zero
	t0        int64     // capture time of the first frame of the first pass
	offset    int64     // capture time added for each completed pass
	windowEnd time.Time // when the open batch leaves
}

func (r *player) run(ctx context.Context, open Opener) error {
	r.start = r.clock.Now()
	r.windowEnd = r.start.Add(r.opts.Window)
	first := true
	for {
		src, err := open()
		if err != nil {
			return fmt.Errorf("replay: open capture: %w", err)
		}
		n, last, err := r.pass(ctx, src, first)
		if sk := src.Skipped(); sk > 0 {
			r.skip(SkipMalformed, uint64(sk))
		}
		if c, ok := src.(io.Closer); ok {
			c.Close()
		}
		if err != nil {
			return err
		}
		if n == 0 {
			if first {
				return errors.New("replay: the capture has no frames")
			}
			return errors.New("replay: the capture had no frames on a later pass")
		}
		first = false
		r.stats.Loops++
		if !r.opts.Loop {
			// The last batch leaves when its window closes, as the
			// others did.
			if !r.opts.Flood && !r.opts.PerFrame && r.enc.Len() > 0 {
				return r.clock.SleepUntil(ctx, r.windowEnd)
			}
			return nil
		}
		// The next pass starts one mean frame gap after this one's last
		// frame.
		span := last - (r.t0 + r.offset)
		gap := int64(1)
		if n > 1 {
			gap = max(span/int64(n-1), 1)
		}
		r.offset += span + gap
	}
}

// pass plays one pass over src. It returns the number of frames read and
// the capture time of the last one.
func (r *player) pass(ctx context.Context, src capture.Source, first bool) (n int, last int64, err error) {
	var f frame.Frame
	var passStart int64
	for {
		if err := ctx.Err(); err != nil {
			return n, last, err
		}
		err := src.Next(&f)
		if errors.Is(err, io.EOF) {
			return n, last, nil
		}
		if err != nil {
			return n, last, fmt.Errorf("replay: read capture: %w", err)
		}
		if n == 0 {
			passStart = f.Time
			if first {
				r.t0 = f.Time
			}
		}
		n++
		last = f.Time - passStart + r.t0 + r.offset // on the first pass's time axis
		if err := r.frame(ctx, &f, last); err != nil {
			return n, last, err
		}
	}
}

// frame schedules one frame whose capture time, on the first pass's
// axis, is at.
func (r *player) frame(ctx context.Context, f *frame.Frame, at int64) error {
	if r.opts.Flood {
		now := r.clock.Now()
		if !r.opts.PerFrame && r.enc.Len() > 0 && !now.Before(r.windowEnd) {
			r.flush(ctx)
			r.windowEnd = now.Add(r.opts.Window)
		}
		f.Time = now.UnixNano()
		return r.add(ctx, f)
	}
	due := r.start.Add(time.Duration(float64(at-r.t0) / r.opts.Speed))
	if r.opts.PerFrame {
		if err := r.clock.SleepUntil(ctx, due); err != nil {
			return err
		}
		f.Time = r.clock.Now().UnixNano()
		return r.add(ctx, f)
	}
	if !due.Before(r.windowEnd) {
		if r.enc.Len() > 0 {
			if err := r.clock.SleepUntil(ctx, r.windowEnd); err != nil {
				return err
			}
			r.flush(ctx)
		}
		// The window that holds due; empty windows send nothing.
		k := due.Sub(r.start) / r.opts.Window
		r.windowEnd = r.start.Add((k + 1) * r.opts.Window)
	}
	f.Time = due.UnixNano()
	return r.add(ctx, f)
}

// add puts a frame in the open batch and sends the batch when it is a
// per-frame one or full.
func (r *player) add(ctx context.Context, f *frame.Frame) error {
	if err := r.enc.Add(f); err != nil {
		var fe *rawbatch.FormatError
		if errors.As(err, &fe) && errors.Is(err, rawbatch.ErrTooMany) {
			r.flush(ctx)
			return r.add(ctx, f)
		}
		reason := SkipUnencodable
		if errors.Is(err, rawbatch.ErrFD) {
			reason = SkipFD
		}
		r.skip(reason, 1)
		return nil
	}
	r.stats.Frames++
	if r.opts.PerFrame {
		r.flush(ctx)
	}
	return nil
}

// skip counts n frames or lines skipped for reason.
func (r *player) skip(reason string, n uint64) {
	if r.stats.SkippedBy == nil {
		r.stats.SkippedBy = map[string]uint64{}
	}
	r.stats.SkippedBy[reason] += n
	r.stats.Skipped += n
}

// DescribeSkips says what was skipped and why, for a person: "2 CAN FD
// frames (wire format v1 carries classic CAN only), 1 malformed line".
func DescribeSkips(by map[string]uint64) string {
	var parts []string
	add := func(n uint64, one, many, why string) {
		switch {
		case n == 1:
			parts = append(parts, "1 "+one+why)
		case n > 1:
			parts = append(parts, fmt.Sprintf("%d %s%s", n, many, why))
		}
	}
	add(by[SkipFD], "CAN FD frame", "CAN FD frames", " (wire format v1 carries classic CAN only)")
	add(by[SkipUnencodable], "frame", "frames", " wire format v1 cannot carry (ID too wide or data over 8 bytes)")
	add(by[SkipMalformed], "malformed line", "malformed lines", "")
	return strings.Join(parts, ", ")
}

// flush sends the open batch, if any.
func (r *player) flush(ctx context.Context) {
	n := r.enc.Len()
	if n == 0 {
		return
	}
	r.buf = r.enc.Flush(r.buf[:0])
	r.stats.Batches++
	if err := r.pub.Publish(ctx, r.buf); err != nil {
		r.stats.Failed++
		r.stats.FailedFrames += uint64(n)
		r.stats.LastError = err.Error()
		if r.opts.Flood {
			// A broker that refuses everything must not turn a flood
			// into a busy loop.
			_ = r.clock.SleepUntil(ctx, r.clock.Now().Add(r.opts.Window))
		}
	}
}

// wallClock follows time.Now with one reusable timer.
type wallClock struct {
	timer *time.Timer
}

func newWallClock() *wallClock {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &wallClock{timer: t}
}

func (c *wallClock) Now() time.Time { return time.Now() }

func (c *wallClock) SleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	c.timer.Reset(d)
	select {
	case <-c.timer.C:
		return nil
	case <-ctx.Done():
		c.timer.Stop()
		return ctx.Err()
	}
}
