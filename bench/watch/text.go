package watch

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/yukart/candec/bench/report"
)

// WriteTable writes the live view: one row per topic.
func WriteTable(w io.Writer, stats []TopicStats) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "topic\trate/s\tlast\tage\tlost\tlatency ms (last/max)\tflags")
	for i := range stats {
		t := &stats[i]
		lat := "—"
		if t.HasLatency {
			lat = ms(t.LastLatency) + " / " + ms(t.MaxLatency)
		}
		lost := report.Count(t.Lost)
		if t.Restarts > 0 {
			lost += fmt.Sprintf(" (%d restarts)", t.Restarts)
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%s\t%s\t%s\t%s\t%s\n", t.Topic, t.Rate, t.Last, FormatAge(t.Age), lost, lat, flags(t))
	}
	return tw.Flush()
}

// FormatAge formats an age coarsely, the way a person reads it: "12ms",
// "3.4s", "5m0s".
func FormatAge(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// WriteSummary writes the summary for a person: totals, loss, flags,
// latency percentiles.
func WriteSummary(w io.Writer, s Summary, h interface {
	WriteDistribution(io.Writer) error
}) error {
	fmt.Fprintf(w, "%d topics, %s messages in %v (%s/s); lost %s", s.Topics, report.Count(s.Messages),
		s.Duration.Round(time.Millisecond), report.Thousands(s.Rate), report.Count(s.Lost))
	if s.Restarts > 0 {
		fmt.Fprintf(w, ", %d publisher restarts", s.Restarts)
	}
	fmt.Fprintf(w, "; %d stale, %d older than the stale limit\n", s.Stale, s.Old)
	if s.Latency.N == 0 {
		return nil
	}
	fmt.Fprintf(w, "latency from ts: p50 %.3f ms, p99 %.3f ms, max %.3f ms over %s samples\n",
		s.Latency.P50, s.Latency.P99, s.Latency.Max, report.Count(s.Latency.N))
	return h.WriteDistribution(w)
}
