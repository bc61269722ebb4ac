package mqttclient

import (
	"testing"
	"time"
)

// TestScheduleBacksOffAfterShortConnections: a connection that drops at
// once (another client took the session over) does not lead to an
// immediate reconnect; the waits grow to the maximum, stay within
// [d/2, d], and only a stable connection resets them.
func TestScheduleBacksOffAfterShortConnections(t *testing.T) {
	now := time.Unix(0, 0)
	for _, jit := range []struct {
		name string
		pick func(n int64) int64
		at   func(d time.Duration) time.Duration
	}{
		{"lowest", func(int64) int64 { return 0 }, func(d time.Duration) time.Duration { return d / 2 }},
		{"highest", func(n int64) int64 { return n - 1 }, func(d time.Duration) time.Duration { return d }},
	} {
		t.Run(jit.name, func(t *testing.T) {
			s := newSchedule(100*time.Millisecond, time.Second)
			s.now = func() time.Time { return now }
			s.rand = jit.pick
			ms := time.Millisecond
			steps := []struct {
				what    string
				lasted  time.Duration // -1: no connection before this attempt
				attempt int
				want    time.Duration
			}{
				{"start-up", -1, 0, 0},
				{"after a failed first attempt", -1, 1, jit.at(100 * ms)},
				{"taken over at once", 5 * ms, 0, jit.at(100 * ms)},
				{"taken over again", 5 * ms, 0, jit.at(200 * ms)},
				{"the broker refuses the next attempt", -1, 1, jit.at(400 * ms)},
				{"taken over again", 3 * time.Second, 0, jit.at(400 * ms)},
				{"taken over again", 5 * ms, 0, jit.at(800 * ms)},
				{"taken over again", 5 * ms, 0, jit.at(time.Second)},
				{"taken over again: capped", 5 * ms, 0, jit.at(time.Second)},
				{"after a stable connection", 30 * time.Second, 0, 0},
				{"and its first failed attempt", -1, 1, jit.at(100 * ms)},
			}
			for i, st := range steps {
				if st.lasted >= 0 {
					s.up()
					now = now.Add(st.lasted)
				}
				if got := s.wait(st.attempt); got != st.want {
					t.Fatalf("step %d (%s): got wait %v, want %v", i, st.what, got, st.want)
				}
			}
		})
	}
}
