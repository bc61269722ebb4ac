package fleet

import (
	"strings"
	"testing"
)

// TestSumMetric: a counter's samples summed over its labels; a
// per-vehicle counter with no vehicle yet is 0 on an ingest's page
// (the warm-up's end can come before an ingest's first window), and an
// error on a page that is no ingest's or is not the text format.
func TestSumMetric(t *testing.T) {
	const commits = "# TYPE candec_ingest_commits_total counter\ncandec_ingest_commits_total{instance=\"ingest0\"} 0\n"
	for _, tc := range []struct {
		name, page string
		want       float64
		err        string
	}{
		{"two vehicles", commits + "# TYPE candec_ingest_values_total counter\n" +
			"candec_ingest_values_total{instance=\"ingest0\",vehicle=\"car0000\"} 1500\n" +
			"candec_ingest_values_total{instance=\"ingest0\",vehicle=\"car 1\"} 2.5e3\n", 4000, ""},
		{"no vehicle yet", commits, 0, ""},
		{"no ingest's page", "# TYPE go_goroutines gauge\ngo_goroutines 7\n", 0, "no metric candec_ingest_values_total"},
		{"empty page", "", 0, "no metric candec_ingest_values_total"},
		{"a line opening with {}", "{} 1\n", 0, "unreadable metrics page"},
		{"not the text format", "candec_ingest_values_total{vehicle=\"x\" 12\n", 0, "line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := sumMetric(strings.NewReader(tc.page), metricValues)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v; want one naming %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
