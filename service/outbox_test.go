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
	if got[0] != "a#3" || got[1] != "b#3" || got[len(got)-2] != "a#10" || got[len(got)-1] != "b#10" {
		t.Fatalf("got %v; want a#3 b#3 … a#10 b#10", got)
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
	want := []string{"a#8"}
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
