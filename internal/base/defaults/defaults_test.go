package defaults

import (
	"testing"
	"time"
)

func TestPositive(t *testing.T) {
	for _, c := range []struct{ v, want int }{{5, 5}, {1, 1}, {0, 7}, {-1, 7}} {
		if got := Positive(c.v, 7); got != c.want {
			t.Errorf("Positive(%d, 7) = %d, want %d", c.v, got, c.want)
		}
	}
	if got := Positive(-time.Second, time.Minute); got != time.Minute {
		t.Errorf("Positive(-1s, 1m) = %v, want 1m", got)
	}
	if got := Positive(0.5, 2.0); got != 0.5 {
		t.Errorf("Positive(0.5, 2) = %v, want 0.5", got)
	}
}
