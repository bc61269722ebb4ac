package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/yukart/candec/internal/base/defaults"
	"github.com/yukart/candec/internal/base/numfmt"
	"github.com/yukart/candec/internal/lab/jitter"

	"github.com/yukart/candec/benchmarks/scenario"
)

// DefaultLastRuns is how many of a scenario's latest runs a summary
// takes the median of.
const DefaultLastRuns = 3

// Row is one scenario of a summary.
type Row struct {
	// Scenario names the row.
	Scenario string
	// Runs is how many runs the medians are taken over.
	Runs int
	// Median holds, in each numeric field, the median of those runs;
	// its labels (load, DBC, policy, stream, versions) are the latest
	// run's.
	Median Result
	// Warnings are the warnings of those runs, each once.
	Warnings []string
}

// Summary is the median of the last runs of each scenario.
type Summary struct {
	// Host is the results' host.
	Host string
	// Rows in order: the order given to Summarize, then any other
	// scenario by name.
	Rows []Row
	// Warnings are about the summary itself: runs of one row with
	// different hosts or versions.
	Warnings []string
	// From and To span the runs used.
	From, To time.Time
	// Last is how many of each scenario's latest runs the medians are
	// taken over (at most).
	Last int
}

// Summarize takes the median of the last n runs of each scenario (n ≤ 0
// means DefaultLastRuns). Results must be oldest first, as ReadDir
// returns them. Scenarios in order come first, in that order; the rest
// follow by name.
func Summarize(results []Result, order []string, n int) Summary {
	n = defaults.Positive(n, DefaultLastRuns)
	byScenario := map[string][]Result{}
	for _, r := range results {
		byScenario[r.Scenario] = append(byScenario[r.Scenario], r)
	}
	names := make([]string, 0, len(byScenario))
	for _, name := range order {
		if _, ok := byScenario[name]; ok && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	var rest []string
	for name := range byScenario {
		if !slices.Contains(names, name) {
			rest = append(rest, name)
		}
	}
	sort.Strings(rest)
	names = append(names, rest...)

	s := Summary{Last: n}
	for _, name := range names {
		rs := byScenario[name]
		rs = rs[max(0, len(rs)-n):]
		row := Row{Scenario: name, Runs: len(rs), Median: median(rs)}
		for _, r := range rs {
			for _, w := range r.Warnings {
				if !slices.Contains(row.Warnings, w) {
					row.Warnings = append(row.Warnings, w)
				}
			}
			if s.From.IsZero() || r.Time.Before(s.From) {
				s.From = r.Time
			}
			if r.Time.After(s.To) {
				s.To = r.Time
			}
			s.Host = cmp.Or(s.Host, r.Host)
			if r.Host != rs[0].Host || r.Versions != rs[0].Versions {
				w := fmt.Sprintf("%s: the runs differ in host or versions (%s %+v, %s %+v); their median is not a baseline",
					name, rs[0].Host, rs[0].Versions, r.Host, r.Versions)
				if !slices.Contains(s.Warnings, w) {
					s.Warnings = append(s.Warnings, w)
				}
			}
		}
		s.Rows = append(s.Rows, row)
	}
	return s
}

// median returns the latest run's labels with every figure replaced by
// the median over rs.
func median(rs []Result) Result {
	m := rs[len(rs)-1]
	m.Warnings = nil
	f := func(get func(*Result) float64) float64 {
		v := make([]float64, len(rs))
		for i := range rs {
			v[i] = get(&rs[i])
		}
		return med(v)
	}
	u := func(get func(*Result) uint64) uint64 {
		return uint64(math.Round(f(func(r *Result) float64 { return float64(get(r)) })))
	}
	m.FramesOffered = f(func(r *Result) float64 { return r.FramesOffered })
	m.FramesDelivered = f(func(r *Result) float64 { return r.FramesDelivered })
	m.RawLost = u(func(r *Result) uint64 { return r.RawLost })
	m.RawLossPct = f(func(r *Result) float64 { return r.RawLossPct })
	m.Envelopes = f(func(r *Result) float64 { return r.Envelopes })
	m.EnvelopesOffered = f(func(r *Result) float64 { return r.EnvelopesOffered })
	m.Windows = f(func(r *Result) float64 { return r.Windows })
	m.Deliveries = f(func(r *Result) float64 { return r.Deliveries })
	m.EnvelopesLost = u(func(r *Result) uint64 { return r.EnvelopesLost })
	m.EnvelopeLossPct = f(func(r *Result) float64 { return r.EnvelopeLossPct })
	m.Latency.Raw.N = u(func(r *Result) uint64 { return r.Latency.Raw.N })
	m.Latency.Raw.P50 = f(func(r *Result) float64 { return r.Latency.Raw.P50 })
	m.Latency.Raw.P99 = f(func(r *Result) float64 { return r.Latency.Raw.P99 })
	m.Latency.Raw.Max = f(func(r *Result) float64 { return r.Latency.Raw.Max })
	m.Latency.Envelopes.N = u(func(r *Result) uint64 { return r.Latency.Envelopes.N })
	m.Latency.Envelopes.P50 = f(func(r *Result) float64 { return r.Latency.Envelopes.P50 })
	m.Latency.Envelopes.P99 = f(func(r *Result) float64 { return r.Latency.Envelopes.P99 })
	m.Latency.Envelopes.Max = f(func(r *Result) float64 { return r.Latency.Envelopes.Max })
	m.CPU.Broker = f(func(r *Result) float64 { return r.CPU.Broker })
	m.CPU.Decoder = f(func(r *Result) float64 { return r.CPU.Decoder })
	m.CPU.Replay = f(func(r *Result) float64 { return r.CPU.Replay })
	m.CPU.Subscribers = f(func(r *Result) float64 { return r.CPU.Subscribers })
	m.CPU.Each = f(func(r *Result) float64 { return r.CPU.Each })
	m.CPU.Machine = f(func(r *Result) float64 { return r.CPU.Machine })
	m.CPU.Other = f(func(r *Result) float64 { return r.CPU.Other })
	m.BrokerUsPerDelivery = f(func(r *Result) float64 { return r.BrokerUsPerDelivery })
	m.BrokerUsPerMessage = f(func(r *Result) float64 { return r.BrokerUsPerMessage })
	m.Bytes.Raw = f(func(r *Result) float64 { return r.Bytes.Raw })
	m.Bytes.Envelopes = f(func(r *Result) float64 { return r.Bytes.Envelopes })
	m.Bytes.Delivered = f(func(r *Result) float64 { return r.Bytes.Delivered })
	m.DrainS = f(func(r *Result) float64 { return r.DrainS })
	m.Jitter = medianJitter(rs)
	return m
}

// medianJitter returns the median of each jitter figure over the runs
// of rs that measured it; nil when none did.
func medianJitter(rs []Result) *jitter.Summary {
	var with []*jitter.Summary
	for i := range rs {
		if rs[i].Jitter != nil {
			with = append(with, rs[i].Jitter)
		}
	}
	if len(with) == 0 {
		return nil
	}
	f := func(get func(*jitter.Summary) float64) float64 {
		v := make([]float64, len(with))
		for i, j := range with {
			v[i] = get(j)
		}
		return med(v)
	}
	return &jitter.Summary{
		N:       uint64(math.Round(f(func(j *jitter.Summary) float64 { return float64(j.N) }))),
		Topics:  with[len(with)-1].Topics,
		P50:     f(func(j *jitter.Summary) float64 { return j.P50 }),
		P99:     f(func(j *jitter.Summary) float64 { return j.P99 }),
		Max:     f(func(j *jitter.Summary) float64 { return j.Max }),
		P50Pct:  f(func(j *jitter.Summary) float64 { return j.P50Pct }),
		P99Pct:  f(func(j *jitter.Summary) float64 { return j.P99Pct }),
		MaxPct:  f(func(j *jitter.Summary) float64 { return j.MaxPct }),
		PathP50: f(func(j *jitter.Summary) float64 { return j.PathP50 }),
		PathP99: f(func(j *jitter.Summary) float64 { return j.PathP99 }),
		PathMax: f(func(j *jitter.Summary) float64 { return j.PathMax }),
	}
}

// med returns the median of v (the mean of the middle two for an even
// count), without reordering v.
func med(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Meta is what a Markdown summary says about itself.
type Meta struct {
	// Source names the result files the summary was made from.
	Source string
	// Profile is the profile whose runs were summarised; "" for runs of
	// any profile.
	Profile string
	// Command is the command that writes this summary again from the
	// same results; "" for `candec bench summary`.
	Command string
	// Generated is when the summary was written.
	Generated time.Time
	// References are the report's figures by scenario, for the
	// comparison table; nil leaves it out.
	References map[string]*scenario.Reference
	// Charts are the pictures written beside the summary, by chart name
	// (ChartBroker, …): the file name, relative to the summary, that it
	// embeds. A chart not named is not embedded.
	Charts map[string]string
}

// WriteMarkdown writes the summary as the baseline document: the table
// with the report's columns plus loss, decoder CPU and drain; the
// comparison with the report's figures; the cost table; warnings.
func WriteMarkdown(w io.Writer, s Summary, m Meta) error {
	var b strings.Builder
	writeHeader(&b, s, m)
	writeMixTable(&b, s, m)
	if m.References != nil {
		writeAgainstReport(&b, s, m)
	}
	writeRawTable(&b, s)
	writeJitterTable(&b, s)
	writeWarnings(&b, s)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeHeader writes the title and the paragraph saying what wrote the
// baseline, from which runs and with which versions.
func writeHeader(b *strings.Builder, s Summary, m Meta) {
	fmt.Fprintf(b, "# Bench baseline: %s\n\n", s.Host)
	cmd := cmp.Or(m.Command, "candec bench summary")
	of := ""
	if m.Profile != "" {
		of = " of profile " + m.Profile
	}
	last := s.Last
	last = defaults.Positive(last, DefaultLastRuns)
	fmt.Fprintf(b, "Written by `%s` on %s from %s: for each scenario the median of its last %d runs%s (%s to %s).\n",
		cmd, m.Generated.UTC().Format(time.DateOnly), m.Source, last, of,
		s.From.UTC().Format("2006-01-02 15:04"), s.To.UTC().Format("2006-01-02 15:04 MST"))
	if len(s.Rows) > 0 {
		v := s.Rows[0].Median.Versions
		fmt.Fprintf(b, "candec %s, %s, %s. See benchmarks/README.md for how to read it.\n", v.Candec, v.Broker, v.Go)
	}
}

// embedChart writes a link to the chart of m named name, if it has one.
func embedChart(b *strings.Builder, m Meta, name, alt string) {
	if f := m.Charts[name]; f != "" {
		fmt.Fprintf(b, "\n![%s](%s)\n", alt, f)
	}
}

// writeMixTable writes the mix table, one row a scenario, and its
// charts.
func writeMixTable(b *strings.Builder, s Summary, m Meta) {
	subs := 5
	if len(s.Rows) > 0 {
		subs = s.Rows[0].Median.EnvelopeSubscribers
	}
	fmt.Fprintf(b, "\n## The mix table\n\n")
	fmt.Fprintf(b, "| Scenario | Load | Signals/frame | Cap | Stream | Envelopes/s | Deliveries/s (×%d) | Broker CPU | Envelope latency p50 / p99 (ms) | Envelope loss | Raw loss | Decoder CPU | Drain (s) | Runs |\n", subs)
	b.WriteString("|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range s.Rows {
		x := &r.Median
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s | %s | %s | %.1f | %d |\n",
			r.Scenario, x.Load, x.Signals, x.Cap, x.Stream,
			envelopes(x), numfmt.Thousands(x.Deliveries), numfmt.Pct(x.CPU.Broker),
			numfmt.Ms(x.Latency.Envelopes.P50), numfmt.Ms(x.Latency.Envelopes.P99),
			loss(x.EnvelopesLost, x.EnvelopeLossPct), loss(x.RawLost, x.RawLossPct), numfmt.Pct(x.CPU.Decoder), x.DrainS, r.Runs)
	}
	embedChart(b, m, ChartDeliveries, "Deliveries/s per scenario, signal stream and window stream")
	embedChart(b, m, ChartLatency, "Envelope latency p50 and p99 per scenario")
}

// writeAgainstReport writes the table of the report's figures against
// this baseline's, on the report's scale when both broker costs are
// known, and its chart.
func writeAgainstReport(b *strings.Builder, s Summary, m Meta) {
	sc, scaled := NewScale(s, m.References)
	fmt.Fprintf(b, "\n## Against the report's mix table\n\n")
	b.WriteString("The report's figures (stand-in decoder, car Orin, mosquitto 2.0.11) → this baseline's.\n")
	if scaled {
		here, rep := sc.Saturation()
		fmt.Fprintf(b, "Deliveries/s compare only once normalised: the broker took %.1f µs of CPU per delivery here (%s, the heaviest signal-stream row), "+
			"so one core saturates at %s deliveries/s; the report's took %.1f (%s: %s of a core at %s deliveries/s), saturating at %s. "+
			"The last column places this baseline's rows on the report's scale: the same share of the saturation point, in the report's deliveries/s.\n",
			sc.Here, sc.HereRow, sig3(here), sc.Report, sc.ReportRow,
			numfmt.Pct(m.References[sc.ReportRow].BrokerCPU), numfmt.Thousands(m.References[sc.ReportRow].Deliveries), sig3(rep))
	}
	b.WriteString("\n| Scenario | Envelopes/s | Deliveries/s | Broker CPU | Envelope p50 (ms) | Envelope p99 (ms) | Note |")
	sep := "|---|---:|---:|---:|---:|---:|---|"
	if scaled {
		b.WriteString(" On the report's scale |")
		sep += "---:|"
	}
	b.WriteString("\n" + sep + "\n")
	for _, r := range s.Rows {
		ref := m.References[r.Scenario]
		if ref == nil {
			continue
		}
		x := &r.Median
		deliveries := "—"
		if ref.Deliveries > 0 {
			deliveries = numfmt.Thousands(ref.Deliveries)
		}
		fmt.Fprintf(b, "| %s | %s → %s | %s → %s | %s → %s | %s → %s | %s → %s | %s |",
			r.Scenario,
			numfmt.Thousands(ref.Envelopes), envelopes(x),
			deliveries, numfmt.Thousands(x.Deliveries),
			numfmt.Pct(ref.BrokerCPU), numfmt.Pct(x.CPU.Broker),
			numfmt.Ms(ref.P50), numfmt.Ms(x.Latency.Envelopes.P50),
			numfmt.Ms(ref.P99), numfmt.Ms(x.Latency.Envelopes.P99),
			ref.Note)
		if scaled {
			fmt.Fprintf(b, " %s (%.0f %%) |", sig3(sc.OnReport(x.Deliveries)), sc.Relative(x.Deliveries)*100)
		}
		b.WriteString("\n")
	}
	embedChart(b, m, ChartBroker, "Broker CPU against deliveries/s, this baseline and the report's, on the report's scale")
}

// writeRawTable writes the table of the raw stream and the other costs.
func writeRawTable(b *strings.Builder, s Summary) {
	fmt.Fprintf(b, "\n## The raw stream and the other costs\n\n")
	b.WriteString("| Scenario | Frames/s offered | Frames/s per raw subscriber | Raw latency p50 / p99 / max (ms) | Envelope max (ms) | Windows/s | Broker µs per delivery / per message | Replay CPU | Subscribers CPU (all) | Other CPU | Delivered KB/s |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range s.Rows {
		x := &r.Median
		windows := "—"
		if x.Windows > 0 {
			windows = numfmt.Thousands(x.Windows)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s / %s / %s | %s | %s | %.1f / %.1f | %s | %s | %s | %s |\n",
			r.Scenario, numfmt.Thousands(x.FramesOffered), numfmt.Thousands(x.FramesDelivered),
			numfmt.Ms(x.Latency.Raw.P50), numfmt.Ms(x.Latency.Raw.P99), numfmt.Ms(x.Latency.Raw.Max), numfmt.Ms(x.Latency.Envelopes.Max),
			windows, x.BrokerUsPerDelivery, x.BrokerUsPerMessage, numfmt.Pct(x.CPU.Replay), numfmt.Pct(x.CPU.Subscribers), numfmt.Pct(x.CPU.Other), numfmt.Thousands(x.Bytes.Delivered/1e3))
	}
}

// writeJitterTable writes the cyclic jitter of the rows that measured
// it; nothing when none did (results from before it was measured).
func writeJitterTable(b *strings.Builder, s Summary) {
	var rows []Row
	for _, r := range s.Rows {
		if j := r.Median.Jitter; j != nil && j.N > 0 {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## Cyclic jitter\n\n")
	b.WriteString("How far each envelope's arrival interval fell from its topic's period, |interval − period|, over the cyclic topics (not on change, no heartbeat); the share is of each topic's own period; ")
	b.WriteString("the path's part is |arrival interval − ts interval|, without the frames' own irregularity.\n\n")
	b.WriteString("| Scenario | Cyclic topics | Intervals | Jitter p50 / p99 / max (ms) | Share of the period p50 / p99 / max | The path's part p50 / p99 / max (ms) |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		j := r.Median.Jitter
		fmt.Fprintf(b, "| %s | %d | %s | %s / %s / %s | %s / %s / %s | %s / %s / %s |\n",
			r.Scenario, j.Topics, numfmt.Count(j.N), numfmt.Ms(j.P50), numfmt.Ms(j.P99), numfmt.Ms(j.Max),
			share(j.P50Pct), share(j.P99Pct), share(j.MaxPct), numfmt.Ms(j.PathP50), numfmt.Ms(j.PathP99), numfmt.Ms(j.PathMax))
	}
}

// share formats a share of a period in percent: "4.2 %", "130 %".
func share(pct float64) string {
	if pct >= 100 {
		return fmt.Sprintf("%.0f %%", pct)
	}
	return fmt.Sprintf("%.1f %%", pct)
}

// writeWarnings writes the rows' and the summary's warnings, if any.
func writeWarnings(b *strings.Builder, s Summary) {
	var warned []string
	for _, r := range s.Rows {
		for _, w := range r.Warnings {
			warned = append(warned, r.Scenario+": "+w)
		}
	}
	warned = append(warned, s.Warnings...)
	if len(warned) > 0 {
		b.WriteString("\n## Warnings\n\n")
		for _, w := range warned {
			fmt.Fprintf(b, "- %s\n", w)
		}
	}
}

// envelopes formats a row's envelopes per second, with what the policy
// offered when the decoder had to coalesce: "11,360 (35,950 offered)".
func envelopes(x *Result) string {
	if x.EnvelopesOffered > x.Envelopes*1.01 {
		return numfmt.Thousands(x.Envelopes) + " (" + numfmt.Thousands(x.EnvelopesOffered) + " offered)"
	}
	return numfmt.Thousands(x.Envelopes)
}

// loss formats a loss: "0", or "2,762,480 (70 %)".
func loss(n uint64, pct float64) string {
	if n == 0 {
		return "0"
	}
	switch {
	case pct >= 1:
		return fmt.Sprintf("%s (%.0f %%)", numfmt.Count(n), pct)
	case pct > 0:
		return fmt.Sprintf("%s (%.2g %%)", numfmt.Count(n), pct)
	}
	return numfmt.Count(n)
}
