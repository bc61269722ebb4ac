package scenario

import (
	"cmp"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// RunOverhead is the time a run takes beyond its warm-up and window:
// starting the broker, the decoder and the subscribers, the readiness
// gate, the drain and the shutdown. It is an estimate for plans.
const RunOverhead = 4 * time.Second

// Estimate returns how long the runs take, repeated repeat times.
func Estimate(runs []Run, repeat int) time.Duration {
	var d time.Duration
	for _, r := range runs {
		d += r.Warmup + r.Duration + RunOverhead
	}
	return d * time.Duration(max(repeat, 1))
}

// WritePlan writes what a bench would run, one row per run, and the
// estimated total time.
func WritePlan(w io.Writer, profile string, runs []Run, repeat int) error {
	repeat = max(repeat, 1)
	fmt.Fprintf(w, "profile %s: %d scenarios, each run %d time(s)\n\n", profile, len(runs), repeat)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tscenario\tload\tsignals/frame\tcap\tstream\tsubscribers raw+env\twarm-up+window\tdbc\tpolicy")
	for i, r := range runs {
		load := r.Load.Label
		switch {
		case r.Load.Flood:
			load += " (flood)"
		default:
			load += fmt.Sprintf(" (%g×)", r.Load.Speed)
		}
		if r.Load.PerFrame {
			load += " per frame"
		}
		policy := cmp.Or(r.Policy.File, "(service default)")
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d+%d\t%v+%v\t%s\t%s\n",
			i+1, r.Scenario, load, r.DBC.Label, r.Policy.Label, r.Stream,
			r.RawSubscribers, r.EnvelopeSubscribers, r.Warmup, r.Duration, r.DBC.File, policy)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nestimated time: %v (%v per run for start-up, readiness and drain)\n",
		Estimate(runs, repeat).Round(time.Second), RunOverhead)
	return err
}
