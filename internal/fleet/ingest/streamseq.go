package ingest

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// maxPartitionRanges bounds the ranges of stream sequences an instance
// keeps per partition above its floor: past it the lowest ranges are
// forgotten (a redelivery of one of them would be written again, never
// lost). Above the floor lie only the commits whose acknowledgements
// the server has not counted yet and, while a message another instance
// held waits for its redelivery, the runs taken since: a few ranges.
const maxPartitionRanges = 64

// streamPos is where a JetStream message stands in its partition: its
// stream sequence, whether this is its first delivery, whether the
// delivery follows the instance's previous one of the partition with
// nothing delivered elsewhere between (the consumer sequence one more,
// the same pin, the same connection), and whether it is the first of a
// pin (the partition came to this instance).
type streamPos struct {
	part          int
	seq           uint64
	first, follow bool
	newPin        bool
	// pulled is when the instance sent the pull request the message
	// answered (its own clock): the server sent it after that, so it
	// can have sent it to another instance only AckWait after pulled.
	pulled time.Time
}

// partSeqs is one partition's record: every message at or below floor
// is committed (the consumer's acknowledgement floor when a commit was
// made), and so is every message of the partition within a range of
// done. A range [a, b] holds every message of the partition whose
// stream sequence lies in it, not only a and b: it grows from one first
// delivery to the next while the partition's deliveries all come here
// (a consumer delivers first deliveries in stream order).
type partSeqs struct {
	consumer string
	floor    uint64
	done     seqSet    // committed, above floor
	pend     seqSet    // taken since the last commit
	runLast  uint64    // the last first delivery of the current run, 0 for none
	oldest   time.Time // the earliest pulled of pend's messages
	last     uint64    // the commit that last added to it
	adopted  bool      // the other instances' records read since the pin came
}

// seen reports whether the message at seq was committed or taken.
func (p *partSeqs) seen(seq uint64) bool {
	return seq <= p.floor || p.done.Has(seq) || p.pend.Has(seq)
}

// take adds the message at pos to the next commit.
func (p *partSeqs) take(pos streamPos) {
	if len(p.pend.Ranges()) == 0 || pos.pulled.Before(p.oldest) {
		p.oldest = pos.pulled
	}
	switch {
	case pos.first && pos.follow && p.runLast > 0 && p.runLast < pos.seq:
		p.pend.AddRange(p.runLast, pos.seq)
	default:
		p.pend.Add(pos.seq)
	}
	switch {
	case pos.first:
		p.runLast = pos.seq
	case !pos.follow:
		p.runLast = 0
	}
}

// committed ends commit n: what was taken joins done, and floor is
// raised to the server's (0 when not known).
func (p *partSeqs) committed(n, floor uint64) {
	for _, r := range p.pend.Ranges() {
		p.done.AddRange(r[0], r[1])
	}
	if len(p.pend.Ranges()) > 0 {
		p.last = n
	}
	p.pend, p.oldest = seqSet{}, time.Time{}
	p.raise(floor)
}

// raise raises the floor to f and drops the ranges at or below it.
func (p *partSeqs) raise(f uint64) {
	p.floor = max(p.floor, f)
	r := p.done.Ranges()
	i := 0
	for i < len(r) && r[i][1] <= p.floor {
		i++
	}
	switch {
	case i < len(r) && r[i][0] <= p.floor+1:
		// The floor's message, or the one after it, is in a range:
		// the range starts the floor's run; keep it above.
		p.floor = max(p.floor, r[i][1])
		i++
	}
	rest := slices.Clone(r[i:])
	if len(rest) > maxPartitionRanges {
		rest = rest[len(rest)-maxPartitionRanges:]
	}
	p.done = seqSet{r: rest}
}

// merge adds another instance's record of the partition.
func (p *partSeqs) merge(m manifestStream) {
	for _, r := range m.Seqs {
		if r[0] <= r[1] {
			p.done.AddRange(r[0], r[1])
		}
	}
	p.raise(m.Floor)
}

// manifestStream is one partition in a manifest: the consumer, the
// floor and the ranges committed above it.
type manifestStream struct {
	Consumer string      `json:"consumer"`
	Floor    uint64      `json:"floor"`
	Seqs     [][2]uint64 `json:"seqs,omitempty"`
	Commit   uint64      `json:"commit,omitempty"`
}

// streamRecord is every partition's record, by partition, and the
// consumers' ack wait.
type streamRecord struct {
	parts   []partSeqs
	ackWait time.Duration
}

func newStreamRecord(consumers []string, ackWait time.Duration) *streamRecord {
	s := &streamRecord{parts: make([]partSeqs, len(consumers)), ackWait: ackWait}
	for i, c := range consumers {
		s.parts[i].consumer = c
	}
	return s
}

// resume takes the partitions of a manifest (the instance's latest).
func (s *streamRecord) resume(ms []manifestStream) {
	for _, m := range ms {
		if i := s.index(m.Consumer); i >= 0 {
			s.parts[i].merge(m)
			s.parts[i].last = max(s.parts[i].last, m.Commit)
		}
	}
}

func (s *streamRecord) index(consumer string) int {
	return slices.IndexFunc(s.parts, func(p partSeqs) bool { return p.consumer == consumer })
}

// manifest lists the partitions for a manifest, by consumer.
func (s *streamRecord) manifest() []manifestStream {
	var out []manifestStream
	for _, p := range s.parts {
		if p.floor == 0 && len(p.done.Ranges()) == 0 {
			continue
		}
		out = append(out, manifestStream{Consumer: p.consumer, Floor: p.floor, Seqs: slices.Clone(p.done.Ranges()), Commit: p.last})
	}
	slices.SortFunc(out, func(a, b manifestStream) int { return cmp.Compare(a.Consumer, b.Consumer) })
	return out
}

// young reports whether messages pulled at oldest or later are all
// still only this instance's at now: the server sends a message it
// sent here to another instance only once ackWait has passed without
// its acknowledgement, so none of them can have gone elsewhere yet.
// Half the ack wait is the margin for the commit that follows the
// check (its manifest is written after it) and for the clock's drift
// from the server's.
func young(oldest, now time.Time, ackWait time.Duration) bool {
	return now.Sub(oldest) < ackWait/2
}

// partitionHeld is the check before a manifest for one partition whose
// messages the commit holds, the oldest pulled age ago: nil when none
// of them can have been sent to another instance. They are young
// (young), or the server says the partition is pinned to this
// instance's own pin (pinned; mine, the pin of its last delivery
// here), or to none while the consumer's leader is the one it was
// before the oldest was pulled (steady): a pin is given with a
// delivery, so none means nobody was sent anything since, but a
// consumer's new leader forgets its pin. A server that did not answer
// (infoErr) says nothing.
func partitionHeld(consumer, pinned, mine string, steady bool, infoErr error, age, ackWait time.Duration) error {
	switch {
	case age < ackWait/2:
		return nil
	case infoErr != nil:
		return fmt.Errorf("%w: %s: the oldest message this instance holds of it was pulled %v ago, and the server could not say where it is pinned: %w",
			errPartitionMoved, consumer, age.Round(time.Millisecond), infoErr)
	case pinned == "" && steady:
		return nil
	case pinned != mine || pinned == "":
		return fmt.Errorf("%w: %s is pinned to %q, this instance's pin was %q, and the oldest message it holds of it was pulled %v ago (its consumer's leader unchanged since: %v)",
			errPartitionMoved, consumer, pinned, mine, age.Round(time.Millisecond), steady)
	}
	return nil
}
