package decodejob

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/pipeline"
)

// PolicyOptions are the settings of a policy run besides the policy
// file; the zero value is what the service does by default.
type PolicyOptions struct {
	// Template is the topic template ("" for the default).
	Template string
	// Window adds the window stream's messages to the output.
	Window bool
	// Tail lets time run on this long after the last frame (stale marks,
	// heartbeats and trailing values as the service would publish them
	// if the frames stopped there) before the final Flush.
	Tail time.Duration
	// Name is the capture as error messages name it ("" for "capture").
	Name string
}

// RunPolicy runs the frames of src through the pipeline under the
// policy file at policyPath ("" for the built-in default policy) with
// pipeline.RunOffline and writes what the service would publish, one
// "topic payload" line per message (pipeline.LineWriter). Time moves
// only with the frames' timestamps, as in the service, so the lines are
// the service's envelopes for the same frames (same value, ts and seq;
// the epoch differs). A summary goes to stderr.
//
// A malformed line or an interrupt ends the run there, as the end of the
// capture would: what the caps hold is published and everything is
// written out, then a *CutError says why the capture was not read to its
// end. A write error is a *WriteError, a negative Tail a *UsageError.
func RunPolicy(ctx context.Context, stdout, stderr io.Writer, db *dbc.Database, policyPath string, src capture.Source, opts PolicyOptions) error {
	if opts.Tail < 0 {
		return &UsageError{fmt.Errorf("decode: --tail must be 0 or more, got %s", opts.Tail)}
	}
	cfg := pipeline.Config{TopicTemplate: opts.Template}
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
	name := cmp.Or(opts.Name, "capture")
	lw := pipeline.NewLineWriter(stdout)
	eng, err := pipeline.New(db, cfg, lw)
	if err != nil {
		return err
	}
	res, cut := pipeline.RunOffline(ctx, src, eng, pipeline.OfflineOptions{Tail: opts.Tail, Stop: lw.Err})
	if err := lw.Flush(); err != nil {
		return &WriteError{fmt.Errorf("decode: write: %w", err)}
	}
	writePolicySummary(stderr, eng.Stats(), res.Frames, res.Span)
	if cut == nil {
		return nil
	}
	var le *capture.LineError
	switch {
	case errors.Is(cut, pipeline.ErrInterrupted):
		cut = fmt.Errorf("decode %s: interrupted after %d frames: %w", name, res.Frames, ctx.Err())
	case errors.As(cut, &le):
		cut = fmt.Errorf("decode: %s:%d: %s: %q", name, le.Line, le.Msg, le.Text)
	default:
		cut = fmt.Errorf("decode %s: %w", name, cut)
	}
	return &CutError{Err: cut, Empty: lw.Lines() == 0}
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
	if s.Sources > 0 {
		fmt.Fprintf(w, "; J1939 sources %d", s.Sources)
		if s.Clashes > 0 {
			fmt.Fprintf(w, " (%d signals not published: their topic was another's)", s.Clashes)
		}
	}
	if c := s.ClockSummary(); c != "" {
		fmt.Fprintf(w, "; %s", c)
	}
	fmt.Fprintln(w)
}
