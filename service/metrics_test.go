package service

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/yukart/candec/internal/base/buildinfo"
	"github.com/yukart/candec/rawbatch"
)

// TestInvalidBatchReasons: each way a batch can fail validation counts
// under its own reason label, without allocating.
func TestInvalidBatchReasons(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := newMetrics(reg, func() float64 { return 0 }, func() float64 { return 0 })
	if err != nil {
		t.Fatal(err)
	}
	good, err := rawbatch.AppendBatch(nil, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	header := func(edit func(b []byte) []byte) []byte { return edit(append([]byte(nil), good...)) }
	for _, tc := range []struct {
		name string
		msg  []byte
		want string
	}{
		{"short", []byte{1, 0, 5}, "short"},
		{"version", header(func(b []byte) []byte { b[0] = 2; return b }), "version"},
		{"flags", header(func(b []byte) []byte { b[1] = 0x80; return b }), "flags"},
		{"length", header(func(b []byte) []byte { b[2] = 1; return b }), "length"},
		{"other", nil, "other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var perr error
			if tc.msg != nil {
				_, perr = rawbatch.Parse(tc.msg)
			} else {
				perr = errors.New("something else")
			}
			if perr == nil {
				t.Fatal("the batch parsed; the test wants an invalid one")
			}
			before := gatherInvalid(t, reg)
			m.invalid(perr).Inc()
			after := gatherInvalid(t, reg)
			for reason, n := range after {
				want := before[reason]
				if reason == tc.want {
					want++
				}
				if n != want {
					t.Errorf("reason %q: got %v, want %v (the batch failed with %v)", reason, n, want, perr)
				}
			}
			if a := testing.AllocsPerRun(100, func() { m.invalid(perr).Inc() }); a != 0 {
				t.Errorf("got %v allocations counting an invalid batch, want 0", a)
			}
		})
	}
}

func gatherInvalid(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "candec_raw_batches_invalid_total" {
			continue
		}
		for _, x := range mf.GetMetric() {
			out[x.GetLabel()[0].GetValue()] = x.GetCounter().GetValue()
		}
	}
	if len(out) != len(invalidReasons) {
		t.Fatalf("got %d reason labels, want %d: %v", len(out), len(invalidReasons), out)
	}
	return out
}

// TestMetricNames: the service's metrics, without the ones that only
// repeated candec_envelopes_published_total{kind}.
func TestMetricNames(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := newMetrics(reg, func() float64 { return 0 }, func() float64 { return 0 }); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, mf := range mfs {
		names[mf.GetName()] = mf.GetHelp()
	}
	for _, gone := range []string{"candec_heartbeats_total", "candec_stale_marks_total"} {
		if _, ok := names[gone]; ok {
			t.Errorf("%s is served; want it gone (candec_envelopes_published_total{kind} counts it)", gone)
		}
	}
	if h := names["candec_publish_queue_depth"]; !strings.Contains(h, "Envelopes waiting") {
		t.Errorf("candec_publish_queue_depth help %q; want it to say it counts envelopes, as the code does", h)
	}
}

// TestBuildInfoMetric: candec_build_info is 1 with the build's labels.
func TestBuildInfoMetric(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := newMetrics(reg, func() float64 { return 0 }, func() float64 { return 0 }); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	b := buildinfo.Read()
	for _, mf := range mfs {
		if mf.GetName() != "candec_build_info" {
			continue
		}
		if len(mf.GetMetric()) != 1 {
			t.Fatalf("candec_build_info has %d series, want 1", len(mf.GetMetric()))
		}
		m := mf.GetMetric()[0]
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		want := map[string]string{"version": b.Short(), "revision": b.Revision, "goversion": b.Go}
		for k, v := range want {
			if labels[k] != v {
				t.Errorf("label %s = %q, want %q", k, labels[k], v)
			}
		}
		if got := m.GetGauge().GetValue(); got != 1 {
			t.Errorf("value %v, want 1", got)
		}
		return
	}
	t.Fatal("candec_build_info is not served")
}
