package tune

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/yukart/candec/internal/base/numfmt"

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
	fmt.Fprintf(w, "fidelity: total error %.4g (sum of RMS error / range), %s state transitions missed (%s of value-table signals)",
		r.TotalError, numfmt.Thousands(float64(r.Missed)), numfmt.Thousands(float64(r.MissedEnum)))
	if n := r.housekeeping(); n > 0 {
		fmt.Fprintf(w, "; %d housekeeping signals (checksums, counters) not counted", n)
	}
	fmt.Fprintln(w)
	n := len(r.Signals)
	if top > 0 && top < n {
		n = top
		fmt.Fprintf(w, "\ntop %d of %d signals by envelopes/s:\n", n, len(r.Signals))
	} else {
		fmt.Fprintf(w, "\n%d signals by envelopes/s:\n", n)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "signal\tframes/s\tchanges/s\tenvelopes/s\tshare\trms\tmax\trms res\tlag p50/p99/max\tmissed\thb/s\tstale/s\tpolicy\t")
	for _, s := range r.Signals[:n] {
		f := &s.Fidelity
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%.1f %%\t%s\t%s\t%.3g\t%s\t%s\t%.1f\t%.1f\t%s\t\n",
			s.Name, s.FramesPerS, s.ChangesPerS, s.EnvelopesPerS, s.Share,
			pct(f.RMSRange), pct(f.MaxRange), f.RMSRes, lags(f), missed(f), f.HeartbeatsPerS, f.StalePerS, policyText(&s))
	}
	return tw.Flush()
}

// housekeeping counts the published housekeeping signals.
func (r *Report) housekeeping() int {
	n := 0
	for i := range r.Signals {
		if r.Signals[i].Housekeeping != "" {
			n++
		}
	}
	return n
}

// policyText is a signal's policy, and whether it is housekeeping.
func policyText(s *Signal) string {
	if s.Housekeeping != "" {
		return s.Policy + " (housekeeping, by " + s.Housekeeping + ")"
	}
	return s.Policy
}

// pct is a fraction of a range in percent.
func pct(x float64) string { return fmt.Sprintf("%.3g %%", x*100) }

// lags are a signal's change lags in ms, "-" without a change.
func lags(f *Fidelity) string {
	if f.Changes == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f/%.0f/%.0f ms", f.LagP50*1e3, f.LagP99*1e3, f.LagMax*1e3)
}

// missed is a state's transitions missed of all, "-" for another signal.
func missed(f *Fidelity) string {
	if !f.State {
		return "-"
	}
	return fmt.Sprintf("%d/%d", f.Missed, f.Transitions)
}
