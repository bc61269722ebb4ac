package tune

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/yukart/candec/internal/lab/chart"
	"github.com/yukart/candec/internal/lab/chart/charttest"
	"github.com/yukart/candec/pipeline"
)

// TestChart: the picture is SVG with both series on both panels, the
// axes labelled, and the budget on the deliveries axis; a signal the
// policy leaves out is counted before, and marked as nothing after.
func TestChart(t *testing.T) {
	pol, err := pipeline.ParsePolicy("p.yaml", []byte("defaults:\n  max_rate: 20\nrules:\n  - match: [Const]\n    publish: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Analyze(source(t, captureOf(1000)), Config{DB: database(t), Policy: pol, Subscribers: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Unpublished) != 1 || rep.Unpublished[0].Name != "Msg.Const" {
		t.Fatalf("unpublished = %+v, want Msg.Const", rep.Unpublished)
	}
	// Before: both signals at 100 values/s; after: Counter capped at 20.
	if got, want := rep.ValuesPerS, 2*rep.FramesPerS; got != want {
		t.Errorf("values/s = %.2f, want %.2f (two signals in every frame)", got, want)
	}

	for _, tt := range []struct {
		name   string
		cfg    ChartConfig
		budget string
	}{
		{"default budget", ChartConfig{Policy: "p.yaml"}, "budget: 22,000 deliveries/s"},
		{"budget 500", ChartConfig{Policy: "p.yaml", Budget: 500}, "budget: 500 deliveries/s"},
	} {
		c, w, h := rep.Chart(tt.cfg)
		var buf bytes.Buffer
		if err := chart.Write(&buf, c, w, h, chart.SVG); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		texts := charttest.Check(t, buf.Bytes(),
			"Envelopes/s per signal, before and after the policy p.yaml",
			"Deliveries/s to 4 all-signal subscribers, added up signal by signal",
			"signals, costliest first",
			"before: every decoded value (no policy)",
			"after: what the policy publishes",
			"after: nothing published",
			tt.budget,
			"Per signal: RMS error against cost",
			fmt.Sprintf("a signal (total error %.3g)", rep.TotalError),
		)
		// The y axes: a label over two lines is two texts.
		for _, want := range []string{"envelopes/s per signal", "deliveries/s", "(envelopes/s × 4 subscribers)"} {
			if !slices.Contains(texts, want) {
				t.Errorf("%s: no axis label %q in %q", tt.name, want, texts)
			}
		}
		// Two series on the deliveries panel besides the budget, with
		// their totals.
		var before, after int
		for _, s := range texts {
			if strings.HasPrefix(s, "before: ") && strings.HasSuffix(s, " deliveries/s") {
				before++
			}
			if strings.HasPrefix(s, "after: ") && strings.Contains(s, "of the budget") {
				after++
			}
		}
		if before != 1 || after != 1 {
			t.Errorf("%s: %d before and %d after totals, want one each: %q", tt.name, before, after, texts)
		}
	}
}

// TestChartDefault names the default policy, and draws an empty report
// without failing.
func TestChartDefault(t *testing.T) {
	for _, rep := range []*Report{{Subscribers: 5}, {Subscribers: 5, Signals: []Signal{{Name: "M.S", FramesPerS: 10, EnvelopesPerS: 0}}}} {
		c, w, h := rep.Chart(ChartConfig{})
		var buf bytes.Buffer
		if err := chart.Write(&buf, c, w, h, chart.SVG); err != nil {
			t.Fatal(err)
		}
		charttest.Check(t, buf.Bytes(), "Envelopes/s per signal, before and after the default policy", "budget: 22,000 deliveries/s")
	}
}
