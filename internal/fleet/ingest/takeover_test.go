package ingest

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho/session/state"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/yukart/candec/envelope"
)

// TestTakeoverStops: two instances given one id (here also one
// certificate, whose name the fleet's broker makes the client id), each
// on a lake of its own. The second one's arrival takes the session over:
// the first stops with ErrTakenOver, counted, without committing what it
// held, and does not reconnect to take the session back; the second gets
// what the first held uncommitted and the rest of the stream. No window
// is written twice, in either lake, and none is lost.
func TestTakeoverStops(t *testing.T) { takeoverStops(t, startFleet(t)) }

func takeoverStops(t *testing.T, f *fleet) {
	wins := carWindows(t, envelope.Msgpack)
	dirA, dirB := t.TempDir(), t.TempDir()
	cfgA := brokerConfig(t, f, "a", dirA)
	cfgA.MaxUnacked, cfgA.RollAge = 200, time.Hour // holds a part uncommitted
	reg := prometheus.NewRegistry()
	cfgA.Registerer = reg
	a := startIngest(t, cfgA)
	kart := f.car(t, "kart01")
	half := len(wins) / 2
	kart.publish(t, wins[:half])
	a.waitFor(t, "the first half", func(c Counters) bool { return c.Windows == uint64(half) })
	held := a.in.Counters().Windows - a.in.Counters().Acked
	if held == 0 {
		t.Fatal("the first instance holds nothing uncommitted: the test tests less than it says")
	}

	b := startIngest(t, brokerConfig(t, f, "a", dirB))
	// mosquitto 2.0.11 closes the first one's connection without a word;
	// the first message of the second one's subscription that reaches
	// the first tells it.
	kart.publish(t, wins[half:])
	select {
	case <-a.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the first instance still runs 30 s after its session was taken over")
	}
	if !errors.Is(a.err, ErrTakenOver) || !strings.Contains(a.err.Error(), "another client made in this session") {
		t.Errorf("first instance: %v, want ErrTakenOver naming the subscription another client made", a.err)
	}
	ca := a.in.Counters()
	if ca.Takeovers != 1 || gathered(t, reg, "candec_ingest_takeovers_total", "", "") != 1 {
		t.Errorf("takeovers %d (metric %v), want 1", ca.Takeovers, gathered(t, reg, "candec_ingest_takeovers_total", "", ""))
	}
	b.waitFor(t, "the rest and what the first held", func(c Counters) bool {
		return ca.Acked+c.Windows >= uint64(len(wins))
	})
	time.Sleep(500 * time.Millisecond) // a window written twice would come now
	b.stop()
	if b.err != nil {
		t.Fatalf("second instance: %v", b.err)
	}
	cb := b.in.Counters()
	t.Logf("first: %d windows, %d committed in %d commits (%d messages), %d held; second: %d windows, %d duplicates", ca.Windows, ca.Acked, ca.Commits, ca.Messages, held, cb.Windows, cb.Duplicates)
	if cb.Takeovers != 0 || ca.Acked+cb.Windows != uint64(len(wins)) {
		t.Errorf("second: %d takeovers, %d windows; want 0, the %d the first did not commit", cb.Takeovers, cb.Windows, uint64(len(wins))-ca.Acked)
	}
	union := lakeCells(t, dirA)
	for k, v := range lakeCells(t, dirB) {
		union[k] = append(union[k], v...)
	}
	sameCells(t, union, published(t, "kart01", wins))
}

// TestTakeoverEvidence: what tells a takeover, and what does not. A
// DISCONNECT with reason 0x8E tells it (once); another reason, or a
// connection closed without a word, does not. A subscription
// identifier not seen before, after the instance's own, tells it; the
// previous run's, delivered first at a start and again after a
// reconnect, does not, nor does a message without one.
func TestTakeoverEvidence(t *testing.T) {
	var told int
	s := &ackSession{SessionManager: state.NewInMemory(), takenOver: func() { told++ }}
	for _, dp := range []*packets.Disconnect{nil, {ReasonCode: 0x8B}, nil, {ReasonCode: 0x8E}, {ReasonCode: 0x8E}} {
		_ = s.ConnectionLost(dp)
	}
	if told != 1 || !s.wasTakenOver() {
		t.Errorf("0x8E told %d times (taken over %v), want once", told, s.wasTakenOver())
	}

	ids := &subIDs{own: 7}
	n := func(x int) *int { return &x }
	for i, step := range []struct {
		id      *int
		foreign bool
	}{
		{n(3), false}, // the previous run's backlog
		{nil, false},  // a subscription of a version without identifiers
		{n(3), false},
		{n(7), false}, // this run's own
		{n(3), false}, // the previous run's again, resent after a reconnect
		{nil, false},
		{n(7), false},
		{n(9), true}, // a subscription made since: a takeover
	} {
		if got := ids.foreign(step.id); got != step.foreign {
			t.Errorf("step %d: foreign %v, want %v", i, got, step.foreign)
		}
	}
}

// TestCommitsHeldAfterSilentLoss: after a connection the broker closed
// without a word, a connection is accepted again and the commits wait
// until it has lasted holdAfterSilentLoss: by count, bytes or age
// alike; then the commit due is made even if no message comes (the
// broker may have stopped sending at the Receive Maximum). A connection
// ended by a DISCONNECT, or by the client, holds nothing.
func TestCommitsHeldAfterSilentLoss(t *testing.T) {
	var held int
	s := &ackSession{SessionManager: state.NewInMemory(), afterSilentLoss: func() { held++ }}
	connack := func() { _ = s.ConAckReceived(io.Discard, &packets.Connect{}, &packets.Connack{}) }
	connack()
	_ = s.ConnectionLost(nil) // closed without a word
	connack()
	_ = s.ConnectionLost(&packets.Disconnect{ReasonCode: 0x8B}) // the broker shutting down, said
	_ = s.ConnectionLost(nil)                                   // as paho's shutdown calls it after
	connack()
	if held != 1 {
		t.Errorf("held %d times, want once: after the silent loss only", held)
	}

	wins := carWindows(t, envelope.JSON)
	now := time.Unix(1000, 0)
	cfg := testConfig(t, "a")
	cfg.Now, cfg.MaxUnacked = func() time.Time { return now }, 100
	in := newTestIngest(t, cfg, newFakeLake().opened())
	var a acked
	in.core.ack = a.record
	in.core.hold(now.Add(holdAfterSilentLoss))
	feed(in.core, kartTopic, wins[:300], 1)
	in.core.rollIfOld(now.Add(holdAfterSilentLoss - time.Millisecond))
	if c := in.Counters(); c.Commits != 0 || len(a.refs) != 0 {
		t.Fatalf("%d commits, %d acknowledged while held; want none", c.Commits, len(a.refs))
	}
	now = now.Add(holdAfterSilentLoss)
	in.core.rollIfOld(now)
	if c := in.Counters(); c.Commits != 1 || len(a.refs) != 300 {
		t.Errorf("%d commits acknowledged %d once the hold passed; want 1 of 300", c.Commits, len(a.refs))
	}
}

// TestCommitNumberTaken: two instances of one id on one store (an
// object store prefix, where no lock keeps them apart), both started
// before either committed: the second to commit finds the number taken
// in the record and stops (ErrRecordTaken) rather than replace the
// other's manifest and files.
func TestCommitNumberTaken(t *testing.T) {
	wins := carWindows(t, envelope.JSON)
	fl := newFakeLake()
	cfg := testConfig(t, "a")
	a, b := newTestIngest(t, cfg, fl.opened()), newTestIngest(t, cfg, fl.opened())
	feed(a.core, kartTopic, wins[:100], 1)
	feed(b.core, kartTopic, wins[100:200], 1)
	if err := a.core.close(); err != nil {
		t.Fatal(err)
	}
	before := fl.store.names()
	if err := b.core.close(); !errors.Is(err, ErrRecordTaken) || !strings.Contains(err.Error(), "0000000000.json") {
		t.Errorf("second commit 0: %v, want ErrRecordTaken naming the manifest", err)
	}
	if after := fl.store.names(); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Errorf("the refused commit changed the store: %q, was %q", after, before)
	}
	sameCells(t, fl.cells(), published(t, "kart01", wins[:100]))
}
