package service

import (
	"sync"
	"sync/atomic"

	"github.com/yukart/candec/pipeline"
)

// topicDepth is how many envelopes of one topic may wait for the broker
// while it is connected: the engine handles a whole batch at once and
// may publish a topic more than once per batch (a 1 kHz signal ten
// times in a 10 ms batch); the publisher takes the batch's envelopes
// once the engine is done with it (outbox.ready), or, for a topic that
// fills half its queue, as soon as that happens.
const topicDepth = 16

// streamDepth is how many messages of a stream topic (the window stream)
// may wait, connected or not: 5 s of 10 ms windows. A stream's messages
// are not states where the latest one stands for the others: each
// window holds frames no other window has, so they are never coalesced.
// Only when a broker that is away or too slow lets them pile up past
// this are the oldest dropped (counted as overflow), which keeps memory
// bounded.
const streamDepth = 512

// outbox holds what waits for the broker: per topic, a small FIFO of
// envelopes not yet handed to the MQTT client (at most topicDepth while
// connected, only the latest while not), and one FIFO of topic indexes in
// the order the envelopes came. However long the broker is away, it
// holds at most one envelope per signal topic: the latest value wins. An
// envelope dropped for a newer one is counted ("coalesced"), and
// subscribers see it as a gap in seq. A stream topic (the window stream)
// instead keeps up to streamDepth messages, connected or not.
//
//	engine ──put──▶ queue[topic] ──▶ order FIFO ──take──▶ publisher ──▶ broker
//	       ──ready (once a batch)──────────wake──────────▶
//
// The engine goroutine puts, the publisher goroutine takes; payload
// buffers are swapped between the queues and the publisher, so nothing
// is allocated once they have grown to the largest envelope.
type outbox struct {
	mu    sync.Mutex
	qs    []topicQueue
	depth int     // the current limit per signal topic: topicDepth or 1
	order []int32 // topic indexes, one per waiting envelope, oldest first
	head  int
	n     int
	total atomic.Int64 // n, readable without the lock (the queue depth gauge)
	// wake has room for one signal: ready leaves one when envelopes
	// wait.
	wake chan struct{}
	// last is the queue of the message take returned last, -1 before
	// the first or after take found nothing: the publisher's spare
	// buffer goes back to it.
	last int
}

// topicQueue is one topic's waiting envelopes, oldest first, in a ring.
type topicQueue struct {
	msgs    []msg
	head, n int
	stream  bool   // a stream topic: its limit is len(msgs), always
	spare   []byte // a buffer for a put whose slot has none large enough
}

// limit is how many envelopes q may hold when signal topics may hold
// depth.
func (q *topicQueue) limit(depth int) int {
	if q.stream {
		return len(q.msgs)
	}
	return depth
}

// msg is one message to publish, as the engine produced it.
type msg struct {
	slot    int
	topic   string
	retain  bool
	kind    pipeline.OutKind
	ts      int64
	seq     uint64
	payload []byte
}

// newOutbox returns an outbox for topics topics, the streams among them
// (by index) stream topics. Topics beyond them are added as put meets
// them (the topics of J1939 sources, as each is first seen).
func newOutbox(topics int, streams ...int) *outbox {
	b := &outbox{
		qs:    make([]topicQueue, topics),
		depth: 1,
		order: make([]int32, topics*topicDepth+len(streams)*(streamDepth-topicDepth)),
		wake:  make(chan struct{}, 1),
		last:  -1,
	}
	for i := range b.qs {
		b.qs[i].msgs = make([]msg, topicDepth)
	}
	for _, i := range streams {
		b.qs[i] = topicQueue{msgs: make([]msg, streamDepth), stream: true}
	}
	return b
}

// grow adds signal topics up to topics, with room in the order FIFO for
// their envelopes; what waits keeps its order. b.mu is held.
func (b *outbox) grow(topics int) {
	n := len(b.qs)
	for range topics - n {
		b.qs = append(b.qs, topicQueue{msgs: make([]msg, topicDepth)})
	}
	order := make([]int32, len(b.order)+(len(b.qs)-n)*topicDepth)
	for k := range b.n {
		order[k] = b.order[(b.head+k)%len(b.order)]
	}
	b.order, b.head = order, 0
}

// put copies o into topic i's queue and returns how many waiting
// envelopes it dropped to make room (0 or 1).
func (b *outbox) put(i int, o *pipeline.Out, retain bool) (dropped int) {
	b.mu.Lock()
	if i >= len(b.qs) {
		b.grow(i + 1)
	}
	q := &b.qs[i]
	if q.n >= q.limit(b.depth) {
		// Drop the oldest; the order FIFO keeps its entry, which now
		// stands for the next oldest.
		q.head = (q.head + 1) % len(q.msgs)
		q.n--
		dropped = 1
	} else {
		b.order[(b.head+b.n)%len(b.order)] = int32(i)
		b.n++
		b.total.Store(int64(b.n))
	}
	m := &q.msgs[(q.head+q.n)%len(q.msgs)]
	q.n++
	m.slot, m.topic, m.retain, m.kind, m.ts, m.seq = i, o.Topic, retain, o.Kind, o.TS, o.Seq
	if cap(m.payload) < len(o.Payload) && cap(q.spare) >= len(o.Payload) {
		m.payload, q.spare = q.spare, m.payload
	}
	m.payload = append(m.payload[:0], o.Payload...)
	busy := q.n == q.limit(b.depth)/2
	b.mu.Unlock()
	if busy {
		b.signal()
	}
	return dropped
}

// signal wakes the publisher.
func (b *outbox) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// ready wakes the publisher when envelopes wait. The engine calls it
// once it has handled a batch (or a tick, a republish, a policy swap),
// not at each put: the publisher then takes the batch's envelopes
// together and sends them in one write, and wakes once a batch, not
// once an envelope. (put wakes it sooner for a topic whose queue is
// half full, so that a long batch does not fill it.)
func (b *outbox) ready() {
	if b.len() > 0 {
		b.signal()
	}
}

// take removes the oldest waiting message; its payload is its queue's
// buffer. spare is the payload of the message taken before (or the
// buffer giveBack returned): it goes back to that message's queue, as
// the spare its next put fills. So every queue keeps a few buffers of
// its own messages' size: a window stream's large buffers do not
// travel to signal topics, leaving the window's queue small buffers to
// grow at every window. ok is false when nothing waits.
func (b *outbox) take(spare []byte) (m msg, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if q := b.spareOf(); q != nil && cap(spare) > cap(q.spare) {
		q.spare = spare
	}
	b.last = -1
	if b.n == 0 {
		return msg{}, false
	}
	i := b.order[b.head]
	b.head = (b.head + 1) % len(b.order)
	b.n--
	b.total.Store(int64(b.n))
	q := &b.qs[i]
	p := &q.msgs[q.head]
	m = *p
	p.payload = nil
	b.last = int(i)
	q.head = (q.head + 1) % len(q.msgs)
	q.n--
	return m, true
}

// spareOf is the queue of the message take returned last, or nil.
// b.mu is held.
func (b *outbox) spareOf() *topicQueue {
	if b.last < 0 {
		return nil
	}
	return &b.qs[b.last]
}

// giveBack returns a message the broker did not take to the front of the
// queues, unless its topic's queue is full (then the newer ones win and
// giveBack reports dropped). It returns a spare buffer for the caller.
func (b *outbox) giveBack(m msg) (spare []byte, dropped bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := &b.qs[m.slot]
	if q.n >= q.limit(b.depth) {
		return m.payload, true
	}
	q.head = (q.head - 1 + len(q.msgs)) % len(q.msgs)
	q.n++
	p := &q.msgs[q.head]
	spare = p.payload
	*p = m
	b.head = (b.head - 1 + len(b.order)) % len(b.order)
	b.order[b.head] = int32(m.slot)
	b.n++
	b.total.Store(int64(b.n))
	return spare, false
}

// setConnected sets the limit per signal topic: topicDepth while the
// broker is connected, only the latest envelope while it is not. Going
// down drops all but the latest of each signal topic at once and returns
// how many; stream topics keep theirs.
func (b *outbox) setConnected(up bool) (dropped int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if up {
		b.depth = topicDepth
		return 0
	}
	b.depth = 1
	excess := map[int32]int{}
	for i := range b.qs {
		q := &b.qs[i]
		if q.n > 1 && !q.stream {
			excess[int32(i)] = q.n - 1
			dropped += q.n - 1
			q.head = (q.head + q.n - 1) % len(q.msgs)
			q.n = 1
		}
	}
	if dropped == 0 {
		return 0
	}
	// Remove one order entry per dropped envelope, the oldest ones.
	kept := 0
	for k := range b.n {
		i := b.order[(b.head+k)%len(b.order)]
		if excess[i] > 0 {
			excess[i]--
			continue
		}
		b.order[(b.head+kept)%len(b.order)] = i
		kept++
	}
	b.n = kept
	b.total.Store(int64(b.n))
	return dropped
}

// len returns the number of waiting messages.
func (b *outbox) len() int { return int(b.total.Load()) }
