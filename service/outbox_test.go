package service

import (
	"fmt"
	"testing"

	"github.com/yukart/candec/pipeline"
)

func out(topic string, seq uint64) *pipeline.Out {
	return &pipeline.Out{Topic: topic, Seq: seq, Payload: []byte(fmt.Sprintf("%s#%d", topic, seq))}
}

func drainAll(b *outbox) []string {
	var got []string
	var spare []byte
	for {
		m, ok := b.take(spare)
		if !ok {
			return got
		}
		got = append(got, string(m.payload))
		spare = m.payload
	}
}

func TestOutboxOrderAndDepth(t *testing.T) {
	b := newOutbox(2)
	b.setConnected(true)
	for seq := uint64(1); seq <= topicDepth+2; seq++ {
		if d := b.put(0, out("a", seq), true); (d == 1) != (seq > topicDepth) {
			t.Fatalf("put a#%d dropped %d; want a drop only past %d waiting", seq, d, topicDepth)
		}
		b.put(1, out("b", seq), true)
	}
	if got, want := b.len(), 2*topicDepth; got != want {
		t.Fatalf("waiting %d, want %d (bounded by %d per topic)", got, want, topicDepth)
	}
	got := drainAll(b)
	// The two oldest of each topic were dropped; the rest come in order
	// per topic, the newest last.
	last := topicDepth + 2
	if got[0] != "a#3" || got[1] != "b#3" || got[len(got)-2] != fmt.Sprintf("a#%d", last) || got[len(got)-1] != fmt.Sprintf("b#%d", last) {
		t.Fatalf("got %v; want a#3 b#3 … a#%d b#%d", got, last, last)
	}
}

func TestOutboxLatestWinsWhileDown(t *testing.T) {
	b := newOutbox(3)
	b.setConnected(true)
	for seq := uint64(1); seq <= 5; seq++ {
		b.put(0, out("a", seq), true)
		b.put(2, out("c", seq), true)
	}
	if d := b.setConnected(false); d != 8 {
		t.Fatalf("going down dropped %d; want 8 (all but the latest of a and c)", d)
	}
	for seq := uint64(6); seq <= 1000; seq++ {
		b.put(0, out("a", seq), true)
	}
	b.put(1, out("b", 1), true)
	if b.len() != 3 {
		t.Fatalf("waiting %d while down; want 3, one per topic", b.len())
	}
	if got := fmt.Sprint(drainAll(b)); got != "[a#1000 c#5 b#1]" {
		t.Fatalf("got %s; want [a#1000 c#5 b#1]", got)
	}
}

func TestOutboxGiveBack(t *testing.T) {
	b := newOutbox(2)
	b.setConnected(true)
	b.put(0, out("a", 1), true)
	b.put(1, out("b", 1), true)
	m, _ := b.take(nil)
	if _, dropped := b.giveBack(m); dropped {
		t.Fatal("giveBack dropped a#1 although a's queue had room")
	}
	if got := fmt.Sprint(drainAll(b)); got != "[a#1 b#1]" {
		t.Fatalf("got %s; want [a#1 b#1]: a given-back message goes first", got)
	}
	b.setConnected(false)
	b.put(0, out("a", 2), true)
	m, _ = b.take(nil)
	b.put(0, out("a", 3), true)
	if _, dropped := b.giveBack(m); !dropped {
		t.Fatal("giveBack kept a#2 although a#3 is newer and the broker is down")
	}
	if got := fmt.Sprint(drainAll(b)); got != "[a#3]" {
		t.Fatalf("got %s; want [a#3]", got)
	}
}

// TestOutboxGrows: a topic beyond those the outbox was made with (a
// J1939 source's, first seen) gets its own queue; what waited keeps its
// order, also when the order FIFO had wrapped.
func TestOutboxGrows(t *testing.T) {
	b := newOutbox(2)
	b.setConnected(true)
	for seq := uint64(1); seq <= topicDepth; seq++ {
		b.put(0, out("a", seq), true)
	}
	for range topicDepth - 1 { // move the FIFO's head on, so that it wraps
		m, _ := b.take(nil)
		b.put(1, out("b", m.seq), true)
	}
	b.put(4, out("e", 1), true)
	for seq := uint64(2); seq <= topicDepth+1; seq++ {
		b.put(4, out("e", seq), true) // its own depth: none of a's or b's dropped
	}
	got := drainAll(b)
	want := []string{fmt.Sprintf("a#%d", topicDepth)}
	for seq := 1; seq <= topicDepth-1; seq++ {
		want = append(want, fmt.Sprintf("b#%d", seq))
	}
	for seq := 2; seq <= topicDepth+1; seq++ {
		want = append(want, fmt.Sprintf("e#%d", seq))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

// woken reports whether the publisher was woken, and takes the signal.
func woken(b *outbox) bool {
	select {
	case <-b.wake:
		return true
	default:
		return false
	}
}

// TestOutboxWake: put does not wake the publisher, ready does when
// something waits, and put does when a topic's queue gets half full.
func TestOutboxWake(t *testing.T) {
	b := newOutbox(2)
	b.setConnected(true)
	b.ready()
	if woken(b) {
		t.Fatal("ready with nothing waiting woke the publisher")
	}
	for seq := uint64(1); seq < topicDepth/2; seq++ {
		b.put(0, out("a", seq), true)
		b.put(1, out("b", seq), true)
	}
	if woken(b) {
		t.Fatalf("put woke the publisher with %d waiting per topic, want no wake below %d", topicDepth/2-1, topicDepth/2)
	}
	b.ready()
	if !woken(b) {
		t.Fatal("ready with envelopes waiting did not wake the publisher")
	}
	b.put(0, out("a", topicDepth/2), true)
	if !woken(b) {
		t.Fatalf("put did not wake the publisher when topic a's queue reached %d", topicDepth/2)
	}
}

// TestOutboxBuffersStayWithTheirTopic: the buffer the publisher hands
// back goes to the queue of the message it came from, so a large
// window's buffer is reused for the next window, not by a signal.
func TestOutboxBuffersStayWithTheirTopic(t *testing.T) {
	b := newOutbox(2, 0)
	b.setConnected(true)
	big := &pipeline.Out{Topic: "w", Payload: make([]byte, 1<<16)}
	var spare []byte
	for range 3 { // warm up: each queue's buffers grow
		b.put(0, big, false)
		b.put(1, out("s", 1), true)
		for _, want := range []int{0, 1} {
			m, _ := b.take(spare)
			if m.slot != want {
				t.Fatalf("took slot %d, want %d", m.slot, want)
			}
			spare = m.payload
		}
	}
	small := out("s", 1)
	if n := testing.AllocsPerRun(50, func() {
		b.put(0, big, false)
		b.put(1, small, true)
		for range 2 {
			m, _ := b.take(spare)
			spare = m.payload
		}
	}); n != 0 {
		t.Fatalf("got %v allocations per window and signal, want 0", n)
	}
}
