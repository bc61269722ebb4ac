package rawbatch

// SeqTracker follows the sequence numbers of a stream of batches and
// counts lost frames. A consumer calls Observe once per batch, in arrival
// order. The zero value is ready to use.
//
// A batch whose seq is ahead of the expected one means the frames in
// between were lost. A seq that goes backwards means the bridge restarted
// (its counter starts again at 0), which is not loss in itself; but the
// first seq frames of the new run were published before this batch, so
// they count as lost. A consumer's first batch sets the expectation: the
// frames before it were published before the consumer was listening.
type SeqTracker struct {
	next     uint64
	started  bool
	lost     uint64
	frames   uint64
	restarts uint64
}

// Observe records a batch of count frames whose first frame has sequence
// number seq. It returns the frames lost just before this batch and
// whether the bridge restarted.
func (t *SeqTracker) Observe(seq uint64, count int) (lost uint64, restarted bool) {
	switch {
	case !t.started:
		t.started = true
	case seq > t.next:
		lost = seq - t.next
	case seq < t.next:
		restarted = true
		lost = seq
		t.restarts++
	}
	t.next = seq + uint64(count)
	t.lost += lost
	t.frames += uint64(count)
	return lost, restarted
}

// Lost returns the total number of frames lost so far.
func (t *SeqTracker) Lost() uint64 { return t.lost }

// Frames returns the total number of frames received so far.
func (t *SeqTracker) Frames() uint64 { return t.frames }

// Restarts returns how many bridge restarts were seen.
func (t *SeqTracker) Restarts() uint64 { return t.restarts }

// Next returns the sequence number expected next, and false before the
// first batch.
func (t *SeqTracker) Next() (uint64, bool) { return t.next, t.started }
