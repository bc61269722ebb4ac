package numfmt

import "testing"

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
