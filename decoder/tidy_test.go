package decoder

import (
	"math"
	"testing"

	"github.com/yukart/candec/dbc"
)

func TestTidy(t *testing.T) {
	scaled := &dbc.Signal{Type: dbc.Integer, Factor: 0.1}
	offset := &dbc.Signal{Type: dbc.Integer, Factor: 0.25, Offset: -40.5}
	odd := &dbc.Signal{Type: dbc.Integer, Factor: 1.0 / 3}
	f32 := &dbc.Signal{Type: dbc.Float32, Factor: 1}
	f32scaled := &dbc.Signal{Type: dbc.Float32, Factor: 0.5}
	f64 := &dbc.Signal{Type: dbc.Float64, Factor: 1}
	milli := &dbc.Signal{Type: dbc.Integer, Factor: 0.001}
	// GPS_Pos_LLH_Latitude of cantools' vehicle.dbc: a factor below the
	// old absolute tolerance of an integer was taken for one.
	micro := &dbc.Signal{Type: dbc.Integer, Signed: true, Factor: 1e-7}
	for _, c := range []struct {
		name string
		v    Value
		want float64
	}{
		{"factor 0.1", Value{Signal: scaled, Raw: 7, Phys: 7 * 0.1}, 0.7},
		{"factor 0.1 large", Value{Signal: scaled, Raw: 3, Phys: 3 * 0.1}, 0.3},
		{"factor 0.1 negative", Value{Signal: scaled, Phys: 23 * -0.1}, -2.3},
		{"quarter and offset", Value{Signal: offset, Raw: 3, Phys: 3*0.25 - 40.5}, -39.75},
		{"no decimal form", Value{Signal: odd, Raw: 1, Phys: 1.0 / 3}, 1.0 / 3},
		{"float32", Value{Signal: f32, Phys: float64(float32(0.1)), Flags: Float}, 0.1},
		{"float32 scaled", Value{Signal: f32scaled, Phys: float64(float32(0.1)) * 0.5, Flags: Float}, float64(float32(0.1)) * 0.5},
		{"float64 left alone", Value{Signal: f64, Phys: 0.1 + 0.2, Flags: Float}, 0.1 + 0.2},
		{"too large to round", Value{Signal: milli, Phys: 1e300}, 1e300},
		{"exact", Value{Signal: scaled, Int: 5, Phys: 5, Flags: Exact}, 5},
		{"factor 1e-7", Value{Signal: micro, Phys: -2006066259 * 1e-7}, -200.6066259},
		{"factor 1e-7 small", Value{Signal: micro, Raw: 3, Phys: 3 * 1e-7}, 3e-7},
	} {
		if got := Tidy(&c.v); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
	nan := Value{Signal: f32, Phys: math.NaN(), Flags: Float}
	if got := Tidy(&nan); !math.IsNaN(got) {
		t.Errorf("NaN: got %v", got)
	}
}

func TestScaleDecimals(t *testing.T) {
	for _, c := range []struct {
		factor, offset, want float64
	}{
		{1, 0, 1},
		{0, 0, 1},
		{0.1, 0, 10},
		{0.25, -40.5, 100},
		{0.001, 0, 1000},
		{1e-7, 0, 1e7},
		{1e-9, 0, 1e9},
		{1e-10, 0, 0}, // more places than are kept
		{5e-8, 0.5, 1e8},
		{1.0 / 3, 0, 0},
		{1, 1e-7, 1e7},
		{1e7, 0, 1},
	} {
		if got := ScaleDecimals(c.factor, c.offset); got != c.want {
			t.Errorf("ScaleDecimals(%g, %g) = %g, want %g", c.factor, c.offset, got, c.want)
		}
	}
}
