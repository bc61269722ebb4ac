package pipeline

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/yukart/candec/frame"
)

// Errors of RunOffline.
var (
	// ErrInterrupted is wrapped by RunOffline's error, together with the
	// context's, when the context ended the run.
	ErrInterrupted = errors.New("pipeline: interrupted")
	// ErrTail: OfflineOptions.Tail is negative.
	ErrTail = errors.New("pipeline: negative tail")
)

// Source gives RunOffline its frames, one at a time: a capture.Source
// (any of capture's readers) is one, and so is anything else that can
// fill a frame. Next overwrites *f with the next frame and returns io.EOF
// after the last one; any other error ends the run there (see
// RunOffline). The engine needs nothing else of a capture, so the
// service, which has no capture, does not link the readers.
type Source interface {
	Next(f *frame.Frame) error
}

// checkEvery is how many frames RunOffline runs between two looks at its
// context: often enough for an interrupt to feel immediate, rarely
// enough to cost nothing next to the frames.
const checkEvery = 4096

// OfflineOptions tune RunOffline. The zero value runs the capture to its
// end and flushes at the time of its last frame.
type OfflineOptions struct {
	// Tail lets time run on this long after the last frame before the
	// final Flush: the stale marks, heartbeats and trailing values the
	// service would publish if the frames stopped there. 0 or more.
	Tail time.Duration
	// Stop, if not nil, is called after every frame and after the final
	// Flush. An error from it ends the run at once (mid-capture, without
	// the final Advance and Flush) and is RunOffline's error: it is for a
	// sink whose output broke (see LineWriter.Err), where nothing more is
	// worth producing.
	Stop func() error
}

// OfflineResult is what a summary of an offline run needs besides the
// Engine's Stats.
type OfflineResult struct {
	// Frames is how many frames were read and given to the Engine
	// (those its clock guard dropped included).
	Frames int
	// Span is the time the frames spanned on the Engine's clock
	// (Stats.Span before the tail): a frame with an implausible
	// timestamp does not lengthen it, nor does the tail.
	Span time.Duration
	// End is the time of the final Flush: the clock after the last frame
	// plus the tail. 0 when Stop ended the run before it.
	End int64
}

// RunOffline runs every frame of src through eng on the frames' clock,
// as the offline decoder does: Frame moves the clock to each frame's
// time (unless that time is implausible, see "Clock jumps"), then time
// runs on by opts.Tail and eng is flushed, so the messages are those the
// service publishes for the same frames if it is stopped at that time.
//
// A malformed record (a *capture.LineError, unless the source skips
// them), another read error or the end of ctx ends the run there as the
// end of the capture would: eng is advanced and flushed all the same
// (what the caps hold is good data), and the error says why the capture
// was not read to its end. When ctx ended the run, the error wraps
// ErrInterrupted and ctx's error; otherwise it is the source's. ctx is
// looked at every few thousand frames and after a read error.
//
// RunOffline allocates nothing per frame.
func RunOffline(ctx context.Context, src Source, eng *Engine, opts OfflineOptions) (OfflineResult, error) {
	var res OfflineResult
	if opts.Tail < 0 {
		return res, fmt.Errorf("%w: %s", ErrTail, opts.Tail)
	}
	var (
		f   frame.Frame
		cut error // why the capture was not read to its end
	)
	for cut == nil {
		if err := src.Next(&f); err != nil {
			switch {
			case errors.Is(err, io.EOF):
			case ctx.Err() != nil:
				// A read that failed because the run was interrupted
				// (a live input unblocked by ctx) is the interrupt.
				cut = interrupted(ctx, res.Frames)
			default:
				cut = err
			}
			break
		}
		eng.Frame(&f)
		if res.Frames++; res.Frames%checkEvery == 0 && ctx.Err() != nil {
			cut = interrupted(ctx, res.Frames)
		}
		if opts.Stop != nil {
			if err := opts.Stop(); err != nil {
				return res, err
			}
		}
	}
	// The span is the frames' (the tail left out), and the end is the
	// clock's: neither is moved by a frame whose time was implausible.
	res.Span = eng.Stats().Span
	res.End = eng.Now() + int64(opts.Tail)
	eng.Advance(res.End)
	eng.Flush(res.End)
	if opts.Stop != nil {
		if err := opts.Stop(); err != nil {
			return res, err
		}
	}
	return res, cut
}

func interrupted(ctx context.Context, frames int) error {
	return fmt.Errorf("%w after %d frames: %w", ErrInterrupted, frames, ctx.Err())
}

// LineWriter is a Sink that writes each message as one line, "topic
// payload", the form mosquitto_sub -v prints: the offline decoder's
// output. Payloads in the msgpack encoding are binary and may hold line
// ends, so the form suits JSON envelopes. Writes are buffered: call
// Flush at the end. After a write error nothing more is written and Err
// returns the error.
type LineWriter struct {
	w     *bufio.Writer
	err   error
	lines int
}

// NewLineWriter returns a LineWriter writing to w.
func NewLineWriter(w io.Writer) *LineWriter {
	return &LineWriter{w: bufio.NewWriterSize(w, 64<<10)}
}

// Publish writes o as a line. It allocates nothing.
func (l *LineWriter) Publish(o *Out) {
	if l.err != nil {
		return
	}
	l.w.WriteString(o.Topic)
	l.w.WriteByte(' ')
	l.w.Write(o.Payload)
	if _, l.err = l.w.WriteString("\n"); l.err == nil {
		l.lines++
	}
}

// Lines returns how many lines were written.
func (l *LineWriter) Lines() int { return l.lines }

// Err returns the first write error, or nil. As OfflineOptions.Stop it
// ends a run whose output broke.
func (l *LineWriter) Err() error { return l.err }

// Flush writes out what is buffered and returns the first write error.
func (l *LineWriter) Flush() error {
	if l.err == nil {
		l.err = l.w.Flush()
	}
	return l.err
}
