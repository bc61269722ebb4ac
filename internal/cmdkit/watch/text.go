package watch

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/yukart/candec/internal/base/numfmt"
	"github.com/yukart/candec/internal/base/termtext"
)

// WriteTable writes the live view: one row per topic.
func WriteTable(w io.Writer, stats []TopicStats) error {
	return writeTable(w, stats)
}

// WriteTableFit writes the table to fit a terminal of width columns and
// rows lines: every line cut to the width (a wrapped row would push the
// header off the screen), the header kept, and when the topics do not
// fit, as many as do and a last line "… N more topics". A width or rows
// of 0 or less does not limit.
func WriteTableFit(w io.Writer, stats []TopicStats, width, rows int) error {
	shown := len(stats)
	if rows > 0 && 1+shown > rows {
		// The header, rows−2 topics and the "more" line.
		shown = max(rows-2, 0)
	}
	var buf bytes.Buffer
	// The widths of all rows, shown or not, so that the columns do not
	// move as the topics shown change.
	if err := writeTable(&buf, stats); err != nil {
		return err
	}
	if excess := maxWidth(buf.String()) - width; width > 0 && excess > 0 {
		// Too wide: shorten the topics from the left first, since
		// their ends tell them apart ("…vehicle/BMS_Cell01"), so that
		// the columns after them stay on the screen.
		topicWidth := 0
		for i := range stats {
			topicWidth = max(topicWidth, utf8.RuneCountInString(stats[i].Topic))
		}
		if keep := max(topicWidth-excess, minTopicWidth); keep < topicWidth {
			short := make([]TopicStats, len(stats))
			for i := range stats {
				short[i] = stats[i]
				short[i].Topic = truncateLeft(stats[i].Topic, keep)
			}
			buf.Reset()
			if err := writeTable(&buf, short); err != nil {
				return err
			}
		}
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	var out strings.Builder
	for i, l := range lines {
		if i > shown {
			break
		}
		out.WriteString(Truncate(strings.TrimSuffix(l, "\n"), width))
		out.WriteByte('\n')
	}
	if more := len(stats) - shown; more > 0 && (rows <= 0 || rows > 1) {
		out.WriteString(Truncate(fmt.Sprintf("… %d more topics (a taller terminal shows them)", more), width))
		out.WriteByte('\n')
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// minTopicWidth is the narrowest the topic column is made to fit a
// terminal.
const minTopicWidth = 16

// maxWidth returns the width of the widest line of s.
func maxWidth(s string) int {
	w := 0
	for _, l := range strings.Split(s, "\n") {
		w = max(w, utf8.RuneCountInString(l))
	}
	return w
}

// truncateLeft cuts s to at most width characters from its start,
// beginning with "…" when cut.
func truncateLeft(s string, width int) string {
	n := utf8.RuneCountInString(s)
	if n <= width {
		return s
	}
	skip := n - width + 1
	for i := range s {
		if skip == 0 {
			return "…" + s[i:]
		}
		skip--
	}
	return "…"
}

// Truncate cuts s to at most width characters, ending in "…" when cut; a
// width of 0 or less does not cut.
func Truncate(s string, width int) string {
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return s
	}
	n := 0
	for i := range s {
		if n == width-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

func writeTable(w io.Writer, stats []TopicStats) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// The flags before the latency, which is the widest column: a
	// narrow terminal cuts the latency first.
	fmt.Fprintln(tw, "topic\trate/s\tlast\tage\tlost\tflags\tjitter ms (last/max of period)\tlatency ms (last/max)")
	for i := range stats {
		t := &stats[i]
		lat, jit := "—", "—"
		if t.HasLatency {
			lat = ms(t.LastLatency) + " / " + ms(t.MaxLatency)
		}
		if t.HasJitter {
			jit = ms(t.LastJitter) + " / " + ms(t.MaxJitter)
			if t.Period > 0 {
				jit += " of " + ms(t.Period)
			}
		}
		lost := numfmt.Count(t.Lost)
		if t.Restarts > 0 {
			lost += fmt.Sprintf(" (%d restarts)", t.Restarts)
		}
		if t.Implausible > 0 {
			lost += fmt.Sprintf(" (%s implausible)", numfmt.Count(t.Implausible))
		}
		// A topic is outside text; Last is made safe when it is set.
		fmt.Fprintf(tw, "%s\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\n", termtext.Clean(t.Topic), t.Rate, t.Last, FormatAge(t.Age), lost, flags(t), jit, lat)
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
	fmt.Fprintf(w, "%d topics, %s messages in %v (%s/s)", s.Topics, numfmt.Count(s.Messages),
		s.Duration.Round(time.Millisecond), numfmt.Thousands(s.Rate))
	if s.Retained > 0 {
		fmt.Fprintf(w, " and %s retained", numfmt.Count(s.Retained))
	}
	fmt.Fprintf(w, "; lost %s", numfmt.Count(s.Lost))
	switch {
	case s.Restarts == 1:
		fmt.Fprint(w, ", 1 publisher restart")
	case s.Restarts > 1:
		fmt.Fprintf(w, ", %d publisher restarts", s.Restarts)
	}
	fmt.Fprintf(w, "; %d stale, %d older than the stale limit\n", s.Stale, s.Old)
	if len(s.Implausible) > 0 {
		reasons := make([]string, 0, len(s.Implausible))
		for r := range s.Implausible {
			reasons = append(reasons, r)
		}
		sort.Strings(reasons)
		fmt.Fprint(w, "implausible messages (seq: left out; ts: no latency):")
		for i, r := range reasons {
			if i > 0 {
				fmt.Fprint(w, ",")
			}
			fmt.Fprintf(w, " %s %s", numfmt.Count(s.Implausible[r]), termtext.Clean(r))
		}
		fmt.Fprintln(w)
	}
	if s.Untracked > 0 || s.UntrackedItems > 0 {
		fmt.Fprintln(w, Untracked(s))
	}
	if s.Ahead > 0 {
		fmt.Fprintf(w, "%s fresh values stamped after their arrival (the publisher's clock is ahead), not in the latency\n", numfmt.Count(s.Ahead))
	}
	if j := s.Jitter; j.N > 0 {
		fmt.Fprintf(w, "cyclic jitter, |arrival interval − period| of %d cyclic topics: p50 %.3f ms (%.1f %% of the period), p99 %.3f ms (%.1f %%), max %.3f ms (%.1f %%) over %s intervals; the path's part, |arrival interval − ts interval|: p50 %.3f, p99 %.3f, max %.3f ms\n",
			j.Topics, j.P50, j.P50Pct, j.P99, j.P99Pct, j.Max, j.MaxPct, numfmt.Count(j.N), j.PathP50, j.PathP99, j.PathMax)
	}
	if s.Latency.N == 0 {
		return nil
	}
	fmt.Fprintf(w, "latency from ts of fresh values: p50 %.3f ms, p99 %.3f ms, max %.3f ms over %s samples\n",
		s.Latency.P50, s.Latency.P99, s.Latency.Max, numfmt.Count(s.Latency.N))
	return h.WriteDistribution(w)
}

// Untracked says what the topic bound left out, for the summary and
// the live view.
func Untracked(s Summary) string {
	return fmt.Sprintf("not followed, over the bound of %s topics (--max-topics): %s messages on new topics, %s window items on new item topics",
		numfmt.Count(uint64(s.MaxTopics)), numfmt.Count(s.Untracked), numfmt.Count(s.UntrackedItems))
}
