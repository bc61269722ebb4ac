package plot

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/lab/chart"
	"github.com/yukart/candec/internal/lab/chart/charttest"
	"github.com/yukart/candec/pipeline"
)

const testDBC = `VERSION ""
BS_:
BU_: ECU
BO_ 256 Motor: 8 ECU
 SG_ Speed : 0|16@1+ (1,0) [0|10000] "rpm" ECU
 SG_ Torque : 16|16@1- (0.1,0) [-300|300] "Nm" ECU
 SG_ Gear : 32|2@1+ (1,0) [0|3] "" ECU
BO_ 512 Idle: 8 ECU
 SG_ Never : 0|8@1+ (1,0) [0|255] "" ECU
VAL_ 256 Gear 3 "D" 2 "N" 1 "R" 0 "P" ;
`

// capture100 is 100 frames of Motor at 100 Hz: Speed rising, Gear 0
// then 3.
func capture100() string {
	var b strings.Builder
	for i := range 100 {
		gear := 0
		if i >= 50 {
			gear = 3
		}
		speed := i * 10
		b.WriteString("(1700000000." + pad6(i*10000) + ") can0 100#")
		for _, v := range []int{speed & 0xff, speed >> 8, 0x10, 0, gear, 0, 0, 0} {
			b.WriteString(hex2(v))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func pad6(n int) string { s := "000000" + itoa(n); return s[len(s)-6:] }
func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var d []byte
	for ; n > 0; n /= 10 {
		d = append([]byte{byte('0' + n%10)}, d...)
	}
	return string(d)
}
func hex2(v int) string { const h = "0123456789ABCDEF"; return string([]byte{h[v>>4], h[v&15]}) }

func load(t *testing.T) *dbc.Database {
	t.Helper()
	f, err := dbc.Parse("test.dbc", []byte(testDBC))
	if err != nil {
		t.Fatal(err)
	}
	db, err := dbc.Compile(f)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func collect(t *testing.T, cfg Config) (*Data, error) {
	t.Helper()
	src, err := capture.NewSource(strings.NewReader(capture100()), capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return Collect(context.Background(), src, cfg)
}

func TestCollectAndChart(t *testing.T) {
	db := load(t)
	d, err := collect(t, Config{DB: db, Signals: "*"})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Series) != 3 || len(d.Missing) != 1 || d.Missing[0].Name != "Never" {
		t.Fatalf("series %d, missing %v; want 3 and [Never]", len(d.Series), d.Missing)
	}
	if got := d.MissingText(); !strings.Contains(got, "Never (message Idle, ID 0x200)") {
		t.Errorf("MissingText = %q, want it to name Never, its message and ID", got)
	}
	if n := len(d.Series[0].Raw); n != 100 {
		t.Errorf("Speed has %d values, want 100", n)
	}
	if last := d.Series[0].Raw[99]; last.V != 990 || last.T < 0.989 || last.T > 0.991 {
		t.Errorf("Speed's last value = %+v, want 990 at 0.99 s", last)
	}
	// rpm, Nm, and Gear's own panel of steps.
	ps := d.Panels()
	if len(ps) != 3 || ps[0].Unit != "rpm" || ps[1].Unit != "Nm" || !ps[2].Steps {
		t.Fatalf("panels = %+v, want rpm, Nm, Gear as steps", ps)
	}
	c, w, h := d.Chart()
	var buf bytes.Buffer
	if err := chart.Write(&buf, c, w, h, chart.SVG); err != nil {
		t.Fatal(err)
	}
	// Labelled axes, a legend entry per series, the value table's labels.
	charttest.Check(t, buf.Bytes(), "rpm", "Nm", "Gear", "time since the first frame (s)", "Speed", "Torque", "P (0)", "D (3)")
}

func TestCollectWithPolicy(t *testing.T) {
	db := load(t)
	pol, err := pipeline.ParsePolicy("cap.yaml", []byte("defaults:\n  max_rate: 10\n"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := collect(t, Config{DB: db, Signals: "Speed", Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	s := d.Series[0]
	// 1 s at a 10 Hz cap: about 10 published of 100 raw.
	if len(s.Published) < 8 || len(s.Published) > 12 {
		t.Errorf("published %d points, want about 10", len(s.Published))
	}
	c, w, h := d.Chart()
	var buf bytes.Buffer
	if err := chart.Write(&buf, c, w, h, chart.SVG); err != nil {
		t.Fatal(err)
	}
	charttest.Check(t, buf.Bytes(), "Speed (raw)", "published: "+itoa(len(s.Published))+" points", "Signals, raw and as published under cap.yaml")
}

func TestErrorsNameTheSignals(t *testing.T) {
	db := load(t)
	tests := []struct {
		glob string
		want error
		text string
	}{
		{"Nope*", ErrNoMatch, `"Nope*"`},
		{"Never", ErrNoFrames, "Never (message Idle, ID 0x200)"},
		{"[", nil, "--signals"},
	}
	for _, tt := range tests {
		_, err := collect(t, Config{DB: db, Signals: tt.glob})
		if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) || !strings.Contains(err.Error(), tt.text) {
			t.Errorf("glob %q: error %v, want %v naming %s", tt.glob, err, tt.want, tt.text)
		}
	}
	if _, err := collect(t, Config{DB: db, Signals: "*", MaxSignals: 2}); !errors.Is(err, ErrTooMany) {
		t.Errorf("4 signals with a maximum of 2: error %v, want ErrTooMany", err)
	}
}

func TestDecimateKeepsExtremes(t *testing.T) {
	var ps []Point
	for i := range 10000 {
		v := 0.0
		if i == 5003 {
			v = 100 // a spike
		}
		ps = append(ps, Point{T: float64(i), V: v})
	}
	got := decimate(ps, 300)
	if len(got) > 310 {
		t.Errorf("decimate kept %d points, want about 300", len(got))
	}
	spike := false
	for i, p := range got {
		spike = spike || p.V == 100
		if i > 0 && p.T < got[i-1].T {
			t.Fatalf("decimate out of time order at %d", i)
		}
	}
	if !spike || got[len(got)-1].T != 9999 {
		t.Errorf("decimate lost the spike (%v) or the last point (%v)", spike, got[len(got)-1])
	}
}

// TestChartNonFiniteGaps: NaN and ±Inf values break the line (no segment
// joins the points on either side of them), the gaps are shaded, and the
// legend says how many values were not finite.
func TestChartNonFiniteGaps(t *testing.T) {
	sig := load(t).Messages[0].Signals[0]
	var raw []Point
	for i := range 30 {
		v := float64(i)
		switch i {
		case 10:
			v = math.NaN()
		case 20, 21:
			v = math.Inf(1 - 2*(i%2))
		}
		raw = append(raw, Point{T: float64(i) / 10, V: v})
	}
	d := &Data{Series: []*Series{{Signal: sig, Raw: raw}}}
	c, w, h := d.Chart()
	var buf bytes.Buffer
	if err := chart.Write(&buf, c, w, h, chart.SVG); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	if !strings.Contains(svg, "3 NaN/±Inf: gaps shaded") {
		t.Error("the legend does not say how many values were not finite")
	}
	// Three runs of finite values, so three lines of the series' colour
	// (a line drawn through the gaps would be one).
	stroke := "stroke:#0072B2"
	if n := strings.Count(svg, stroke); n != 3+1 { // +1: the legend's sample
		t.Errorf("got %d paths stroked %s, want 3 line pieces and the legend's sample", n, stroke)
	}
	segs, gaps, bad := split(raw)
	if len(segs) != 3 || bad != 3 || len(gaps) != 2 || gaps[0] != [2]float64{0.9, 1.1} || gaps[1] != [2]float64{1.9, 2.2} {
		t.Errorf("split: got %d runs, %d bad, gaps %v; want 3, 3, [[0.9 1.1] [1.9 2.2]]", len(segs), bad, gaps)
	}
}
