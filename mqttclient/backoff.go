package mqttclient

import (
	"math/rand/v2"
	"sync"
	"time"
)

// ReasonSessionTakenOver is the MQTT v5 DISCONNECT reason code a broker
// sends to a client when another client connects with the same client id.
const ReasonSessionTakenOver byte = 0x8E

// minStable is the least time a connection must last to count as
// stable: after a stable connection drops, the next attempt is immediate.
const minStable = 10 * time.Second

// StableAfter is how long a connection must last for its drop to reset
// the backoff, for a given longest wait: max(10 s, 2 × reconnectMax).
// Two clients that take one client id from each other never stay
// connected that long, since each reconnects within reconnectMax.
func StableAfter(reconnectMax time.Duration) time.Duration {
	return max(minStable, 2*reconnectMax)
}

// schedule is the reconnection backoff shared by every attempt of one
// connection manager. autopaho restarts its attempt count at 0 after
// each CONNACK, so a broker that accepts the client and drops it at once
// (another client with the same id takes the session over; a broker that
// refuses something right after CONNECT) would otherwise be reconnected
// to in a tight loop. The schedule remembers how long the last connection
// lasted: one shorter than stable continues the backoff where the
// previous round left it, and only a stable one resets it.
//
// Each wait is drawn from [d/2, d], with d doubling from min to max: the
// lower half bounds how often a client can reconnect, the jitter keeps
// two clients that fight over one id (or many clients after a broker
// restart) from reconnecting in step.
type schedule struct {
	min, max time.Duration
	stable   time.Duration
	now      func() time.Time
	rand     func(n int64) int64 // in [0, n)

	mu     sync.Mutex
	upAt   time.Time // when the current or last connection came up
	everUp bool
	streak int // connections in a row that were not stable
}

func newSchedule(minWait, maxWait time.Duration) *schedule {
	return &schedule{
		min:    minWait,
		max:    maxWait,
		stable: StableAfter(maxWait),
		now:    time.Now,
		rand:   rand.Int64N,
	}
}

// up records that a connection came up.
func (s *schedule) up() {
	s.mu.Lock()
	s.upAt, s.everUp = s.now(), true
	s.mu.Unlock()
}

// wait is the autopaho.Backoff: how long to wait before attempt (0 for
// the first attempt after start-up or after a connection dropped).
func (s *schedule) wait(attempt int) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if attempt <= 0 {
		if !s.everUp {
			return 0
		}
		if s.now().Sub(s.upAt) >= s.stable {
			s.streak = 0
			return 0
		}
		s.streak++
	}
	return s.jitter(s.streak + attempt)
}

// jitter returns a wait in [d/2, d] for the n-th step (n ≥ 1) of the
// doubling d = min·2^(n-1), capped at max.
func (s *schedule) jitter(n int) time.Duration {
	d := s.min
	for i := 1; i < n && d < s.max; i++ {
		d *= 2
	}
	d = min(d, s.max)
	half := d / 2
	if half <= 0 {
		return d
	}
	return half + time.Duration(s.rand(int64(d-half)+1))
}
