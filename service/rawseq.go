package service

import "time"

// Limits of the raw seq tracking.
const (
	// maxSeqStreams is how many seq streams (publishers on the raw
	// topic) are followed at once; a new one replaces the one seen least
	// recently.
	maxSeqStreams = 4
	// maxFrameRate bounds the frames one publisher can plausibly have
	// sent in a given time: over ten times what a 1 Mbit/s CAN bus
	// carries. A seq gap beyond what the rate allows since the stream's
	// last batch is not loss but another stream.
	maxFrameRate = 100_000
	// seqActive is how long a stream counts as an active publisher after
	// its last batch.
	seqActive = 2 * time.Second
)

// seqStreams follows the seq of the raw batches and counts lost frames
// and bridge restarts, like rawbatch.SeqTracker, but for as many
// publishers as share the raw topic. A batch carries no publisher id,
// only the publisher's running frame counter, so two bridges (or a
// bridge and a replay) publishing at once look, to a single tracker,
// like a gap or a restart at every change of publisher: it counted
// 1.7 × 10⁸ frames lost from 93 337 received. Here each batch joins the
// stream it continues exactly, or the one it follows after a gap the
// elapsed time makes plausible (the frames in the gap are lost);
// otherwise it starts a stream of its own. A new stream that starts
// below the seq of the stream seen last is a restart of the bridge, and
// the first seq frames of the new run count as lost, at most as many as
// could have been sent since. So the lost count never exceeds what was
// plausibly sent, and when more than one stream is active the service
// says so.
//
// The engine goroutine owns it; it does not allocate.
type seqStreams struct {
	s    [maxSeqStreams]seqStream
	n    int
	last int // the stream of the last batch
}

type seqStream struct {
	next  uint64
	seen  time.Time
	ended bool // a restart ended it; not an active publisher
}

// plausible is how many frames one publisher can have sent in d: at
// least a second's worth, so that a burst after a short pause is loss.
func plausible(d time.Duration) uint64 {
	return uint64(maxFrameRate * max(d, time.Second).Seconds())
}

// observe records a batch of count frames starting at seq, handled at
// now. It returns the frames lost just before it, and whether it is the
// first batch of a bridge that restarted.
func (t *seqStreams) observe(seq uint64, count int, now time.Time) (lost uint64, restarted bool) {
	next := seq + uint64(count)
	if t.n == 0 {
		// The first batch sets the expectation: the frames before it
		// were published before the service was listening.
		t.s[0], t.n, t.last = seqStream{next: next, seen: now}, 1, 0
		return 0, false
	}
	best, gap := -1, uint64(0)
	for i := range t.n {
		st := &t.s[i]
		if seq == st.next {
			best, gap = i, 0
			break
		}
		if seq > st.next {
			if g := seq - st.next; g <= plausible(now.Sub(st.seen)) && (best < 0 || g < gap) {
				best, gap = i, g
			}
		}
	}
	if best >= 0 {
		t.s[best] = seqStream{next: next, seen: now}
		t.last = best
		return gap, false
	}
	// A stream of its own: a restarted bridge, whose old run ends here,
	// or another publisher. The old run is kept: should it go on, it was
	// another publisher after all, and its batches join it again.
	if cur := &t.s[t.last]; seq < cur.next {
		restarted = true
		lost = min(seq, plausible(now.Sub(cur.seen)))
		cur.ended = true
	}
	i := t.n
	if t.n < maxSeqStreams {
		t.n++
	} else {
		i = 0
		for j := 1; j < t.n; j++ {
			if t.s[j].seen.Before(t.s[i].seen) {
				i = j
			}
		}
	}
	t.s[i] = seqStream{next: next, seen: now}
	t.last = i
	return lost, restarted
}

// active returns how many streams had a batch within seqActive of now.
func (t *seqStreams) active(now time.Time) int {
	n := 0
	for i := range t.n {
		if !t.s[i].ended && now.Sub(t.s[i].seen) < seqActive {
			n++
		}
	}
	return n
}
