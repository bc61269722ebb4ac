package service

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/pipeline"
)

// TestClockMetricsLog: dropped frames and discontinuities are counted
// and logged, at most one line per kind per badBatchLogPeriod, each with
// the count since the last line.
func TestClockMetricsLog(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	c := newClockMetrics()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const clock = int64(1_767_225_600) * int64(time.Second)
	var prev pipeline.Stats
	steps := []struct {
		after time.Duration
		cur   pipeline.Stats
	}{
		{0, pipeline.Stats{Future: 1, LastOutlier: 7_258_118_400 * int64(time.Second), Late: 2}},
		{time.Second, pipeline.Stats{Future: 3, Past: 1, Late: 2}},                                                            // held back
		{badBatchLogPeriod, pipeline.Stats{Future: 3, Past: 2, Discontinuities: 1, Late: 2, LastJump: -int64(3 * time.Hour)}}, // 4 since the first line
	}
	for _, s := range steps {
		c.add(&prev, &s.cur)
		c.log(log, start.Add(s.after), clock, &s.cur)
		prev = s.cur
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{
		"frames=1 latest_ts=2200-01-01T00:00:00.000Z",
		"frames=4 ",
		"discontinuities=1 latest_step=-3h0m0s",
	}
	if len(lines) != len(want) {
		t.Fatalf("%d log lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("log line %d = %s, want one containing %q", i, lines[i], w)
		}
	}
	for name, tc := range map[string]struct {
		got  float64
		want float64
	}{
		"late":            {counter(t, c.late), 2},
		"future":          {counter(t, c.future), 3},
		"past":            {counter(t, c.past), 2},
		"discontinuities": {counter(t, c.discontinuities), 1},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", name, tc.got, tc.want)
		}
	}
}
