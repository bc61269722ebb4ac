package tune

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/yukart/candec/internal/numfmt"

	"github.com/yukart/candec/pipeline"
)

// WriteText writes the report for a person: the totals, then the top
// signals by envelopes per second (all of them when top ≤ 0).
func (r *Report) WriteText(w io.Writer, top int) error {
	fmt.Fprintf(w, "capture: %s frames in %.1f s (%s frames/s), %s unknown\n",
		numfmt.Thousands(float64(r.Frames)), r.DurationS, numfmt.Thousands(r.FramesPerS), numfmt.Thousands(float64(r.Unknown)))
	clock := pipeline.Stats{Late: r.Late, Future: r.Future, Past: r.Past, Discontinuities: r.Discontinuities}
	if c := clock.ClockSummary(); c != "" {
		fmt.Fprintln(w, c)
	}
	fmt.Fprintf(w, "envelopes/s: %s   deliveries/s to %d all-signal subscribers: %s\n",
		numfmt.Thousands(r.EnvelopesPerS), r.Subscribers, numfmt.Thousands(r.DeliveriesPerS))
	if r.WindowsPerS > 0 {
		fmt.Fprintf(w, "window stream: %s windows/s, %s deliveries/s to %d subscribers\n",
			numfmt.Thousands(r.WindowsPerS), numfmt.Thousands(r.WindowDeliveriesPerS), r.Subscribers)
	}
	if len(r.ByKind) > 0 {
		fmt.Fprint(w, "by kind:")
		for _, k := range []string{"value", "trailing", "heartbeat", "stale", "flush"} {
			if v, ok := r.ByKind[k]; ok {
				fmt.Fprintf(w, "  %s %.1f/s", k, v)
			}
		}
		fmt.Fprintln(w)
	}
	n := len(r.Signals)
	if top > 0 && top < n {
		n = top
		fmt.Fprintf(w, "\ntop %d of %d signals by envelopes/s:\n", n, len(r.Signals))
	} else {
		fmt.Fprintf(w, "\n%d signals by envelopes/s:\n", n)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "signal\tframes/s\tchanges/s\tenvelopes/s\tshare\tpolicy\t")
	for _, s := range r.Signals[:n] {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%.1f %%\t%s\t\n", s.Name, s.FramesPerS, s.ChangesPerS, s.EnvelopesPerS, s.Share, s.Policy)
	}
	return tw.Flush()
}
