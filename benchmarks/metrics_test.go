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
weird line
broken{ 5
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

func TestDecoderStats(t *testing.T) {
	d := decoderStats(parseMetrics(strings.NewReader(scrapeBefore)), parseMetrics(strings.NewReader(scrapeAfter)))
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
	m := parseMetrics(strings.NewReader(`x{a="b c}d"} 4` + "\n"))
	if got := m.sum("x", nil, nil); got != 4 {
		t.Errorf("sum = %v, want 4", got)
	}
}

func FuzzParseMetrics(f *testing.F) {
	f.Add([]byte(scrapeBefore))
	f.Add([]byte(scrapeAfter))
	f.Fuzz(func(t *testing.T, b []byte) {
		m := parseMetrics(strings.NewReader(string(b)))
		for k := range m {
			if strings.TrimSpace(k) == "" {
				t.Fatalf("empty metric name from %q", b)
			}
		}
	})
}
