package benchmarks

import (
	"strings"
	"testing"
)

const scrapeBefore = `# HELP candec_raw_frames_total Frames in valid raw batches.
# TYPE candec_raw_frames_total counter
candec_raw_frames_total 1000
candec_envelopes_published_total{kind="value"} 500
candec_envelopes_published_total{kind="trailing"} 20
candec_envelopes_published_total{kind="window"} 100
candec_envelopes_suppressed_total{reason="cap"} 7
candec_envelopes_suppressed_total{reason="coalesced"} 0
candec_publish_latency_seconds_bucket{le="0.005"} 3
`

const scrapeAfter = `candec_raw_frames_total 18827
candec_raw_frames_lost_total 3
candec_envelopes_published_total{kind="value"} 4500
candec_envelopes_published_total{kind="trailing"} 120
candec_envelopes_published_total{kind="heartbeat"} 30
candec_envelopes_published_total{kind="window"} 2100
candec_envelopes_suppressed_total{reason="cap"} 1007
candec_envelopes_suppressed_total{reason="unchanged"} 9.0e+01
candec_envelopes_suppressed_total{reason="coalesced"} 2
candec_publish_errors_total 1 1700000000000
`

// parse reads a page that must be read whole.
func parse(t *testing.T, page string) metrics {
	t.Helper()
	m, err := parseMetrics(strings.NewReader(page))
	if err != nil {
		t.Fatalf("parseMetrics: %v", err)
	}
	return m
}

func TestDecoderStats(t *testing.T) {
	d := decoderStats(parse(t, scrapeBefore), parse(t, scrapeAfter))
	checks := []struct {
		what      string
		got, want uint64
	}{
		{"frames in", d.FramesIn, 17827},
		{"frames lost", d.FramesLost, 3},
		{"published", d.Published, 4650 - 520},
		{"windows", d.Windows, 2000},
		{"suppressed cap", d.SuppressedCap, 1000},
		{"suppressed unchanged", d.SuppressedUnchanged, 90},
		{"coalesced", d.Coalesced, 2},
		{"publish errors", d.PublishErrors, 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.what, c.got, c.want)
		}
	}
}

func TestParseMetricsLabelsWithSpaces(t *testing.T) {
	m := parse(t, `x{a="b c}d"} 4`+"\n")
	if got := m.sum("x", nil, nil); got != 4 {
		t.Errorf("sum = %v, want 4", got)
	}
	if got := m.sum("x", []string{`a="b c}d"`}, nil); got != 4 {
		t.Errorf("sum with the label = %v, want 4", got)
	}
}

// TestParseMetricsGarbage: a page that is not the text format is an
// error (the run then says the decoder's metrics were not read), never a
// partial sum.
func TestParseMetricsGarbage(t *testing.T) {
	for _, page := range []string{"weird line\n", "broken{ 5\n", "#0\n{}0\n", scrapeAfter + "x 1 2 3\n"} {
		if _, err := parseMetrics(strings.NewReader(page)); err == nil {
			t.Errorf("parseMetrics(%q): no error", page)
		}
	}
}

func FuzzParseMetrics(f *testing.F) {
	f.Add([]byte(scrapeBefore))
	f.Add([]byte(scrapeAfter))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseMetrics(strings.NewReader(string(b)))
		if err != nil {
			return
		}
		for k := range m {
			if strings.TrimSpace(k) == "" {
				t.Fatalf("empty metric name from %q", b)
			}
			m.sum(k, []string{`kind="window"`}, []string{`reason="cap"`})
		}
	})
}
