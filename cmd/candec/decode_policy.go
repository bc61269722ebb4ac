package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/pipeline"
)

// policyOptions are the settings of decode --policy besides the policy
// file; the zero value is what the service does by default.
type policyOptions struct {
	// Template is the topic template ("" for the default).
	Template string
	// Window adds the window stream's messages to the output.
	Window bool
	// Epoch is written into the envelopes (the service uses its start
	// time; 0 here).
	Epoch uint64
	// Bus keeps only frames of this bus index; -1 keeps all.
	Bus int
	// Tail lets time run on this long after the last frame (stale marks,
	// heartbeats and trailing values as the service would publish them
	// if the frames stopped there) before the final Flush.
	Tail time.Duration
	// SkipInvalid skips malformed capture lines instead of failing.
	SkipInvalid bool
	// Name is the capture as error messages name it ("" for "capture").
	Name string
}

// cutError ends a decode --policy whose capture was not read to its end
// (a malformed line, a read error, an interrupt). The run ended there as
// at the end of a capture, so the envelopes written are whole and are
// those of the capture cut before that point: worth keeping, while the
// error still fails the command.
type cutError struct {
	err   error
	empty bool // no envelope was written
}

func (c *cutError) Error() string { return c.err.Error() }
func (c *cutError) Unwrap() error { return c.err }

// decodeWithPolicy runs the capture in r through the pipeline under the
// policy file at policyPath ("" for the built-in default policy) and
// writes what the service would publish, one "topic payload" line per
// message, as mosquitto_sub -v prints them. Time moves only with the
// frames' timestamps, as in the service, so the lines are the service's
// envelopes for the same frames (same value, ts and seq; the epoch
// differs). A summary goes to stderr.
//
// A malformed line (unless opts.SkipInvalid) or an interrupt ends the
// run there, as the end of the capture would: what the caps hold is
// published and everything is written out, then a *cutError says why
// the capture was not read to its end. A write error is a *writeError.
func decodeWithPolicy(ctx context.Context, e env, db *dbc.Database, policyPath string, r io.Reader, opts policyOptions) error {
	if opts.Tail < 0 {
		return &exitError{2, fmt.Errorf("decode: --tail must be 0 or more, got %s", opts.Tail)}
	}
	cfg := pipeline.Config{TopicTemplate: opts.Template, Epoch: opts.Epoch}
	if policyPath != "" {
		p, err := pipeline.LoadPolicy(policyPath)
		if err != nil {
			return err
		}
		cfg.Policies = p
	}
	if opts.Window {
		cfg.Window = &pipeline.WindowConfig{}
	}
	name := opts.Name
	if name == "" {
		name = "capture"
	}
	w := bufio.NewWriterSize(e.stdout, 64<<10)
	var werr error
	lines := 0
	sink := pipeline.SinkFunc(func(o *pipeline.Out) {
		if werr != nil {
			return
		}
		w.WriteString(o.Topic)
		w.WriteByte(' ')
		w.Write(o.Payload)
		_, werr = w.WriteString("\n")
		lines++
	})
	eng, err := pipeline.New(db, cfg, sink)
	if err != nil {
		return err
	}
	rd := capture.NewReader(r, capture.Options{SkipInvalid: opts.SkipInvalid})
	var f frame.Frame
	n := 0
	var cut error // why the capture was not read to its end
	for cut == nil {
		if err := rd.Next(&f); err != nil {
			var le *capture.LineError
			switch {
			case errors.Is(err, io.EOF):
			case ctx.Err() != nil:
				cut = fmt.Errorf("decode %s: interrupted after %d frames: %w", name, n, ctx.Err())
			case errors.As(err, &le):
				cut = fmt.Errorf("decode: %s:%d: %s: %q", name, le.Line, le.Msg, le.Text)
			default:
				cut = fmt.Errorf("decode %s: %w", name, err)
			}
			break
		}
		if opts.Bus >= 0 && int(f.Bus) != opts.Bus {
			continue
		}
		// Frame moves the clock to f's time, as the live service's
		// watermark would before it, unless f's time is implausible.
		eng.Frame(&f)
		if n++; n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				cut = fmt.Errorf("decode %s: interrupted after %d frames: %w", name, n, err)
			}
		}
		if werr != nil {
			return &writeError{fmt.Errorf("decode: write: %w", werr)}
		}
	}
	// The span is the frames' (the tail left out), and the end is the
	// clock's: neither is moved by a frame whose time was implausible.
	// A cut capture ends here too, as the service does at shutdown: the
	// last values the caps hold are good data.
	span := eng.Stats().Span
	end := eng.Now() + int64(opts.Tail)
	eng.Advance(end)
	eng.Flush(end)
	if err := w.Flush(); err != nil || werr != nil {
		return &writeError{fmt.Errorf("decode: write: %w", errors.Join(werr, err))}
	}
	writePolicySummary(e.stderr, eng.Stats(), n, span)
	if cut != nil {
		return &cutError{err: cut, empty: lines == 0}
	}
	return nil
}

// writePolicySummary says what the policy did: the broker's load is
// the envelopes per second times the subscribers.
func writePolicySummary(w io.Writer, s pipeline.Stats, frames int, span time.Duration) {
	fmt.Fprintf(w, "%d frames (%d unknown), %d values → %d envelopes", frames, s.Unknown, s.Values, s.Total())
	if span > 0 {
		fmt.Fprintf(w, " (%.0f/s over %s)", float64(s.Total())/span.Seconds(), span.Round(time.Millisecond))
	}
	fmt.Fprint(w, ":")
	for _, k := range pipeline.Kinds() {
		if n := s.Published(k); n > 0 {
			fmt.Fprintf(w, " %s %d", k, n)
		}
	}
	fmt.Fprintf(w, "; suppressed: cap %d, unchanged %d", s.SuppressedCap, s.SuppressedUnchanged)
	if s.Unpublished > 0 {
		fmt.Fprintf(w, ", publish:false %d", s.Unpublished)
	}
	if c := s.ClockSummary(); c != "" {
		fmt.Fprintf(w, "; %s", c)
	}
	fmt.Fprintln(w)
}
