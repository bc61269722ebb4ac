package lake

import (
	"math"
	"testing"
)

// TestDatePartitionOfAnyTime: the date= partition is the UTC date of the
// row's time for every time the INT64 TIMESTAMP(NANOS) column holds,
// also at the ends of int64, whose day's first nanosecond lies outside
// it (computed in nanoseconds, the lowest time's date wrapped round to
// 2262); MinTime and MaxTime are whole days.
func TestDatePartitionOfAnyTime(t *testing.T) {
	for _, tc := range []struct {
		ts   int64
		date string
	}{
		{math.MinInt64, "1677-09-21"},
		{MinTime - 1, "1677-09-21"},
		{MinTime, "1677-09-22"},
		{-1, "1969-12-31"},
		{0, "1970-01-01"},
		{1791563856001301000, "2026-10-09"},
		{MaxTime - 1, "2262-04-10"},
		{MaxTime, "2262-04-11"},
		{math.MaxInt64, "2262-04-11"},
	} {
		if got := DayDate(Day(tc.ts)); got != tc.date {
			t.Errorf("time %d: date=%s, want %s", tc.ts, got, tc.date)
		}
	}
	// Whole days, and the first and last whole days of int64: the day
	// before MinTime and the day from MaxTime are cut by its ends.
	if MinTime%dayNanos != 0 || MaxTime%dayNanos != 0 ||
		Day(math.MinInt64) != Day(MinTime)-1 || Day(math.MaxInt64) != Day(MaxTime) {
		t.Errorf("MinTime %d, MaxTime %d: not the whole days of int64", MinTime, MaxTime)
	}
}
