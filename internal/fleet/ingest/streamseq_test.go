package ingest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/yukart/candec/envelope"
)

// TestTopicOfSubject: a stream message's subject back to the topic the
// car published on, as nats-server maps an MQTT topic to a subject (the
// subjects in the table are what the server stored for each topic).
func TestTopicOfSubject(t *testing.T) {
	for _, tc := range []struct {
		subject, topic string
		ok             bool
	}{
		{"p.12.fleet.kart01.yukart.window", "fleet/kart01/yukart/window", true},
		{"p.1.fleet.////.yukart.window", "fleet/../yukart/window", true},
		{"p.0.fleet.a//b.yukart.window", "fleet/a.b/yukart/window", true},
		{"p.14.fleet./.yukart.window", "fleet//yukart/window", true},
		{"p.14.fleet.x%2F.yukart.window", "fleet/x%2F/yukart/window", true},
		{"fleet.kart01.yukart.window", "", false},
		{"p.3", "", false},
		{"p.3.", "", false},
	} {
		got, ok := topicOfSubject(tc.subject)
		if got != tc.topic || ok != tc.ok {
			t.Errorf("topicOfSubject(%q) = %q, %v; want %q, %v", tc.subject, got, ok, tc.topic, tc.ok)
		}
	}
}

// TestPartSeqs: a partition's record. A run of first deliveries that
// follow each other covers the stream sequences between them (other
// partitions' messages); a delivery that follows nothing, or a
// redelivery, covers itself only; the floor takes in the ranges it
// reaches, and a redelivery at or below it, or within a range, is seen.
func TestPartSeqs(t *testing.T) {
	var p partSeqs
	p.take(streamPos{seq: 10, first: true})
	p.take(streamPos{seq: 14, first: true, follow: true})
	p.take(streamPos{seq: 20, first: true, follow: true})
	p.take(streamPos{seq: 30, first: true}) // something went elsewhere between 20 and 30
	p.take(streamPos{seq: 5, follow: true}) // a redelivery: the run goes on
	p.take(streamPos{seq: 33, first: true, follow: true})
	if got, want := p.pend.Ranges(), [][2]uint64{{5, 5}, {10, 20}, {30, 33}}; !slices.Equal(got, want) {
		t.Fatalf("taken %v, want %v", got, want)
	}
	p.committed(1, 0)
	for seq, want := range map[uint64]bool{5: true, 4: false, 12: true, 21: false, 29: false, 31: true, 34: false} {
		if p.seen(seq) != want {
			t.Errorf("seen(%d) = %v, want %v", seq, !want, want)
		}
	}
	p.take(streamPos{seq: 40, first: true}) // the run broke: no range from 33
	if got := p.pend.Ranges(); !slices.Equal(got, [][2]uint64{{40, 40}}) {
		t.Errorf("after a break: %v", got)
	}
	p.committed(2, 9) // the server's floor: everything up to 9 acknowledged
	if p.floor != 20 || !slices.Equal(p.done.Ranges(), [][2]uint64{{30, 33}, {40, 40}}) {
		t.Errorf("floor %d, ranges %v: want 20 (the floor reaches the run from 10), [[30 33] [40 40]]", p.floor, p.done.Ranges())
	}
	var q partSeqs
	q.merge(manifestStream{Floor: 25, Seqs: [][2]uint64{{30, 40}}})
	if !q.seen(25) || !q.seen(35) || q.seen(27) || q.seen(41) {
		t.Errorf("merged record: floor %d, ranges %v", q.floor, q.done.Ranges())
	}
}

// TestPartSeqsBounded: past maxPartitionRanges the lowest ranges are
// forgotten (a redelivery of one is written again, never lost).
func TestPartSeqsBounded(t *testing.T) {
	var p partSeqs
	for i := range uint64(3 * maxPartitionRanges) {
		p.take(streamPos{seq: 10 * (i + 1), first: true})
	}
	p.committed(1, 0)
	if n := len(p.done.Ranges()); n != maxPartitionRanges {
		t.Fatalf("%d ranges kept, want %d", n, maxPartitionRanges)
	}
	if p.seen(10) || !p.seen(30*maxPartitionRanges) {
		t.Errorf("kept the lowest, or forgot the highest: %v", p.done.Ranges()[:2])
	}
}

// TestOwnerSpreads: rendezvous hashing gives each of the live
// instances a share of the partitions, and an instance that goes moves
// only its own.
func TestOwnerSpreads(t *testing.T) {
	two, three := []string{"a", "b"}, []string{"a", "b", "c"}
	count := map[string]int{}
	for k := range DefaultPartitions {
		o2, o3 := owner(two, k), owner(three, k)
		count[o2]++
		if o3 != "c" && o3 != o2 {
			t.Errorf("partition %d moved from %s to %s when c came", k, o2, o3)
		}
	}
	if count["a"] < 4 || count["b"] < 4 {
		t.Errorf("16 partitions split %v between two instances", count)
	}
	if owner([]string{"a"}, 3) != "a" {
		t.Error("a lone instance does not own every partition")
	}
}

// natsSubjectOf is nats-server's conversion of an MQTT topic to the
// subject it publishes on (v2.15.3, mqttToNATSSubjectConversion, for a
// topic name: no wildcards), for FuzzTopicOfSubject: '/' separates
// levels as '.', a '.' in a level is "//", and an empty level is "/".
func natsSubjectOf(mt string) (string, bool) {
	res := make([]byte, 0, len(mt)+10)
	for i := 0; i < len(mt); i++ {
		switch c := mt[i]; c {
		case '/':
			switch {
			case i == 0 || res[len(res)-1] == '.':
				res = append(res, '/', '.')
			case i == len(mt)-1 || mt[i+1] == '/':
				res = append(res, '.', '/')
			default:
				res = append(res, '.')
			}
		case ' ', '\t', '\n', '\r', '\f', 0x7f, '+', '#':
			return "", false
		case '.':
			res = append(res, '/', '/')
		default:
			res = append(res, c)
		}
	}
	if len(res) > 0 && res[len(res)-1] == '.' {
		res = append(res, '/')
	}
	return string(res), true
}

// FuzzTopicOfSubject: a topic, as the server files it in partition 3,
// comes back as it was published.
func FuzzTopicOfSubject(f *testing.F) {
	for _, s := range []string{"fleet/kart01/yukart/window", "fleet/../yukart/window", "fleet/a.b/yukart/window",
		"fleet//yukart/window", "/fleet", "fleet/", "a//b", ".", "..", "/./", "a.//.b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, topic string) {
		subject, ok := natsSubjectOf(topic)
		if !ok || topic == "" {
			return
		}
		got, ok := topicOfSubject("p.3." + subject)
		if !ok || got != topic {
			t.Errorf("topic %q, subject %q: back as %q, %v", topic, subject, got, ok)
		}
	})
}

// TestPartitionHeld: the check before a manifest, for a partition whose
// messages the commit holds. Messages pulled less than half the ack
// wait ago cannot have been sent to another instance (the server sends
// one elsewhere only once its ack wait has passed since it sent it
// here, after the pull): they are committed whoever the server says
// holds the pin, and whether it answered at all (a consumer whose
// leader is being elected). Older ones only while the server says the
// partition is pinned to this instance's own pin, or to none while the
// consumer's leader has not changed since before they were pulled (a
// new leader forgets the pin).
func TestPartitionHeld(t *testing.T) {
	const wait = 20 * time.Second
	errInfo := errors.New("context deadline exceeded")
	for _, tc := range []struct {
		name         string
		pinned, mine string
		steady       bool
		infoErr      error
		age          time.Duration
		moved        bool
	}{
		{"young, pinned here", "p1", "p1", true, nil, time.Second, false},
		{"young, pinned elsewhere", "p2", "p1", true, nil, 9 * time.Second, false},
		{"young, pinned to none, a new leader", "", "p1", false, nil, time.Second, false},
		{"young, no answer", "", "p1", false, errInfo, 9 * time.Second, false},
		{"at half the ack wait, pinned here", "p1", "p1", false, nil, 10 * time.Second, false},
		{"at half the ack wait, pinned elsewhere", "p2", "p1", true, nil, 10 * time.Second, true},
		{"old, pinned to none, the same leader", "", "p1", true, nil, time.Minute, false},
		{"old, pinned to none, a new leader (it forgot the pin)", "", "p1", false, nil, time.Minute, true},
		{"old, no answer", "", "p1", false, errInfo, 15 * time.Second, true},
		{"old, no pin of its own, a new leader", "", "", false, nil, time.Minute, true},
	} {
		err := partitionHeld("lake-3", tc.pinned, tc.mine, tc.steady, tc.infoErr, tc.age, wait)
		if moved := errors.Is(err, errPartitionMoved); moved != tc.moved || (err != nil) != tc.moved {
			t.Errorf("%s: %v, want moved %v", tc.name, err, tc.moved)
		}
		if tc.infoErr != nil && tc.moved && !errors.Is(err, tc.infoErr) {
			t.Errorf("%s: %v does not say why the server did not answer", tc.name, err)
		}
	}
}

// TestNewPinWhileHolding: a partition's messages come under a new pin
// after a gap in the consumer sequence (another instance was sent
// something between) while the instance holds uncommitted messages of
// it: it goes on, and reads what the others committed, while those
// were all pulled less than half the ack wait ago; otherwise it stops
// (errPartitionMoved) and commits none of them.
func TestNewPinWhileHolding(t *testing.T) {
	for _, tc := range []struct {
		name  string
		age   time.Duration // of the oldest held, when the new pin comes
		stops bool
	}{
		{"held for a moment", 100 * time.Millisecond, false},
		{"held for just under half the ack wait", 9900 * time.Millisecond, false},
		{"held for half the ack wait", 10 * time.Second, true},
		{"held for longer than the ack wait", time.Minute, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
			c := newStreamCore(t, func() time.Time { return now }, 20*time.Second)
			win := carWindows(t, envelope.JSON)
			c.handleStream("fleet/kart01/yukart/window", win[0], ackRef{reply: "r1"},
				streamPos{part: 0, seq: 1, first: true, newPin: true, pulled: now})
			now = now.Add(tc.age)
			c.handleStream("fleet/kart01/yukart/window", win[1], ackRef{reply: "r2"},
				streamPos{part: 0, seq: 5, first: true, newPin: true, pulled: now})
			c.mu.Lock()
			err, taken := c.err, len(c.streams.parts[0].pend.Ranges())
			c.mu.Unlock()
			if stopped := errors.Is(err, errPartitionMoved); stopped != tc.stops {
				t.Fatalf("err %v, want the instance stopped: %v", err, tc.stops)
			}
			if !tc.stops && taken != 2 {
				t.Errorf("%d ranges held, want both messages, apart (another was sent what lies between)", taken)
			}
		})
	}
}

// TestResendAfterPartitionMoved: a car sends a window again (its
// connection ended before the PUBACK: a new message of the stream)
// after instance a committed it; the partition has moved to b, which
// skips the resend: taking the partition in, it read a's manifest, its
// stream sequences and its windows.
func TestResendAfterPartitionMoved(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	lake := newFakeLake()
	win := carWindows(t, envelope.JSON)
	a := newStreamCoreOn(t, lake, "a", clock, 20*time.Second)
	a.handleStream(kartTopic, win[0], ackRef{reply: "r1"}, streamPos{part: 0, seq: 1, first: true, newPin: true, pulled: now})
	if err := a.close(); err != nil {
		t.Fatal(err)
	}
	b := newStreamCoreOn(t, lake, "b", clock, 20*time.Second)
	b.handleStream(kartTopic, win[0], ackRef{reply: "r7"}, streamPos{part: 0, seq: 7, first: true, newPin: true, pulled: now})
	b.handleStream(kartTopic, win[1], ackRef{reply: "r8"}, streamPos{part: 0, seq: 8, first: true, follow: true, pulled: now})
	if c := b.counters(); c.Duplicates != 1 || c.Windows != 1 || c.Messages != 2 {
		t.Errorf("b: %d messages, %d windows, %d duplicates; want the resend skipped, the next window taken", c.Messages, c.Windows, c.Duplicates)
	}
}

// newStreamCore is the core of an instance on a JetStream source (not
// connected) with the clock now and the ack wait ackWait.
func newStreamCore(t testing.TB, now func() time.Time, ackWait time.Duration) *core {
	return newStreamCoreOn(t, newFakeLake(), "a", now, ackWait)
}

// newStreamCoreOn is newStreamCore of instance id on lake.
func newStreamCoreOn(t testing.TB, lake *fakeLake, id string, now func() time.Time, ackWait time.Duration) *core {
	cfg := testConfig(t, id)
	cfg.Now, cfg.RollAge = now, 200*time.Millisecond
	cfg.JetStream = &JetStream{URLs: []string{"nats://127.0.0.1:4222"}, AckWait: ackWait}
	in := newTestIngest(t, cfg, lake.opened())
	var a acked
	in.core.ack = a.record
	return in.core
}
