package numfmt

import (
	"math"
	"testing"
)

func TestFormatters(t *testing.T) {
	tests := []struct{ got, want string }{
		{Thousands(16300), "16,300"},
		{Thousands(999.6), "1,000"},
		{Thousands(0), "0"},
		{Thousands(-1234567), "-1,234,567"},
		{Pct(0.94), "0.9 %"},
		{Pct(22.4), "22 %"},
		{Ms(0.314), "0.31"},
		{Ms(8.74), "8.7"},
		{Ms(13.2), "13"},
		{Ms(1472), "1,472"},
		{Count(0), "0"},
		{Count(2762480), "2,762,480"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// TestCountHuge: every uint64 is written exactly, and no float is
// written with two signs (an int64 conversion once gave
// "--9,223,372,036,854,775,808").
func TestCountHuge(t *testing.T) {
	for _, tt := range []struct {
		got, want string
	}{
		{Count(math.MaxUint64), "18,446,744,073,709,551,615"},
		{Count(1 << 63), "9,223,372,036,854,775,808"},
		{Count(0), "0"},
		{Thousands(1.8446744073709552e19), "18,446,744,073,709,551,616"},
		{Thousands(-1e19), "-10,000,000,000,000,000,000"},
		{Thousands(-0.2), "0"},
		{Thousands(math.Inf(1)), "+Inf"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %s, want %s", tt.got, tt.want)
		}
	}
}
