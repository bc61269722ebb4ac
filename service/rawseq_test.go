package service

import (
	"testing"
	"time"
)

// TestSeqStreams: loss and restarts from the batches' seq, with one
// publisher or several sharing the raw topic.
func TestSeqStreams(t *testing.T) {
	type batch struct {
		seq   uint64
		count int
		at    time.Duration // since the start
	}
	ms := time.Millisecond
	for _, tc := range []struct {
		name         string
		batches      []batch
		lost         uint64
		restarts     int
		activeAtLast int
	}{
		{"one publisher, no loss", []batch{{0, 10, 0}, {10, 10, 10 * ms}, {20, 5, 20 * ms}}, 0, 0, 1},
		{"first batch sets the expectation", []batch{{5000, 10, 0}, {5010, 10, 10 * ms}}, 0, 0, 1},
		{"a gap is loss", []batch{{0, 10, 0}, {15, 10, 10 * ms}, {25, 10, 20 * ms}}, 5, 0, 1},
		{"restart: seq goes back, its first frames lost", []batch{{0, 10, 0}, {10, 10, 10 * ms}, {3, 10, 20 * ms}, {13, 10, 30 * ms}}, 3, 1, 1},
		{"restart at 0 after a long run", []batch{{1_000_000, 10, 0}, {0, 10, 10 * ms}, {10, 10, 20 * ms}}, 0, 1, 1},
		{"two publishers interleaved: no loss, no restarts after the first",
			[]batch{{0, 10, 0}, {90_000_000, 10, 5 * ms}, {10, 10, 10 * ms}, {90_000_010, 10, 15 * ms}, {20, 10, 20 * ms}, {90_000_020, 10, 25 * ms}},
			0, 0, 2},
		{"two replays from 0, one started later",
			[]batch{{0, 10, 0}, {10, 10, 10 * ms}, {20, 10, 20 * ms}, {0, 10, 25 * ms}, {30, 10, 30 * ms}, {10, 10, 35 * ms}, {40, 10, 40 * ms}, {20, 10, 45 * ms}},
			0, 1, 2},
		{"two publishers, one loses a batch", []batch{{0, 10, 0}, {90_000_000, 10, 5 * ms}, {10, 10, 10 * ms}, {90_000_020, 10, 25 * ms}, {20, 10, 30 * ms}}, 10, 0, 2},
		{"an implausible jump is another publisher, not loss", []batch{{0, 10, 0}, {10, 10, 10 * ms}, {1 << 40, 10, 20 * ms}, {20, 10, 30 * ms}}, 0, 0, 2},
		{"a silent publisher is not active", []batch{{0, 10, 0}, {1 << 40, 10, 5 * ms}, {10, 10, 3 * time.Second}}, 0, 0, 1},
		{"a restart's lost frames bounded by what could be sent since", []batch{{1 << 40, 10, 0}, {1 << 39, 10, 10 * ms}}, maxFrameRate, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s seqStreams
			start := time.Unix(1_700_000_000, 0)
			var lost uint64
			restarts := 0
			var last time.Time
			for _, b := range tc.batches {
				last = start.Add(b.at)
				l, r := s.observe(b.seq, b.count, last)
				lost += l
				if r {
					restarts++
				}
			}
			if lost != tc.lost || restarts != tc.restarts {
				t.Errorf("got %d lost, %d restarts; want %d lost, %d restarts", lost, restarts, tc.lost, tc.restarts)
			}
			if got := s.active(last); got != tc.activeAtLast {
				t.Errorf("got %d active publishers, want %d", got, tc.activeAtLast)
			}
		})
	}
}
