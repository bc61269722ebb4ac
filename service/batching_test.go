package service

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/pipeline"
)

// uncappedConfig is testConfig with a policy that publishes every value.
func uncappedConfig(t *testing.T, url string) Config {
	t.Helper()
	cfg := testConfig(t, url)
	cfg.Policy = filepath.Join(t.TempDir(), "none.yaml")
	if err := os.WriteFile(cfg.Policy, []byte("defaults:\n  max_rate: 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// checkSeq fails unless each topic's envelopes in ps have seq 1, 2, 3 …
// and their count is want in all.
func checkSeq(t *testing.T, ps []parsed, want int) {
	t.Helper()
	if len(ps) != want {
		t.Fatalf("got %d envelopes, want %d", len(ps), want)
	}
	for topic, es := range byTopic(ps) {
		for i, e := range es {
			if e.Seq != uint64(i+1) {
				t.Fatalf("%s: envelope %d has seq %d, want %d", topic, i, e.Seq, i+1)
			}
		}
	}
}

// TestBatchLeavesInOneWrite: the 14 envelopes of one 7-frame batch
// reach the broker in one write (a system call), in order, each
// topic's seq without a gap. Before, each was a write of its own.
func TestBatchLeavesInOneWrite(t *testing.T) {
	b := brokertest.Start(t)
	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe(DefaultStatusTopic, "yukart/vehicle/#")
	bridge := brokertest.Connect(t, b.URL)
	r := startService(t, uncappedConfig(t, b.URL), loadTestDB(t))
	r.waitConnected(t, sub)
	w0 := r.batch.Writes()
	p0 := counter(t, r.m.published[pipeline.KindValue])
	now := time.Now().UnixNano()
	frames := make([]frame.Frame, topicDepth/2-1) // no topic's queue half full
	for i := range frames {
		frames[i] = motorFrame(now+int64(i)*int64(time.Millisecond), uint16(100+i), int16(i))
	}
	r.sendPaced(t, bridge, 1, frames)
	n := 2 * len(frames)
	got := sub.WaitFor("the batch's envelopes", func(m []brokertest.Message) bool {
		return len(parse(t, m, "yukart/vehicle/")) >= n
	})
	checkSeq(t, parse(t, got, "yukart/vehicle/"), n)
	if c := counter(t, r.m.published[pipeline.KindValue]) - p0; c != float64(n) {
		t.Fatalf("got %v envelopes counted published, want %d", c, n)
	}
	if w := r.batch.Writes() - w0; w != 1 {
		t.Fatalf("got %d writes for one batch's %d envelopes, want 1", w, n)
	}
}

// TestLoneEnvelopeLeavesAtOnce: a batch that yields one envelope (a
// gear change) has it written out at once, in a write of its own: it
// does not wait in the connection's buffer for a later batch, a tick
// or a size to fill.
func TestLoneEnvelopeLeavesAtOnce(t *testing.T) {
	b := brokertest.Start(t)
	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe(DefaultStatusTopic, "yukart/vehicle/Gear")
	bridge := brokertest.Connect(t, b.URL)
	r := startService(t, testConfig(t, b.URL), loadTestDB(t))
	r.waitConnected(t, sub)
	w0 := r.batch.Writes()
	r.sendPaced(t, bridge, 1, []frame.Frame{stateFrame(time.Now().UnixNano(), 3)})
	if w := r.batch.Writes() - w0; w != 1 {
		t.Fatalf("got %d writes once the batch was handed to the client, want 1", w)
	}
	sub.WaitFor("the gear", func(m []brokertest.Message) bool { return len(parse(t, m, "yukart/vehicle/Gear")) == 1 })
}

// TestQoS1EnvelopesAcknowledged: at QoS 1 every envelope goes through
// paho and its PUBACK (no Batcher: a held publish would wait for an
// acknowledgement that cannot come), arrives at QoS 1, and is counted
// published once acknowledged.
func TestQoS1EnvelopesAcknowledged(t *testing.T) {
	b := brokertest.Start(t)
	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe(DefaultStatusTopic, "yukart/vehicle/#")
	bridge := brokertest.Connect(t, b.URL)
	cfg := uncappedConfig(t, b.URL)
	cfg.QoS = 1
	r := startService(t, cfg, loadTestDB(t))
	if r.mqttCfg.Batcher != nil {
		t.Fatal("the client has a Batcher at QoS 1")
	}
	r.waitConnected(t, sub)
	p0 := counter(t, r.m.published[pipeline.KindValue])
	now := time.Now().UnixNano()
	frames := make([]frame.Frame, 10)
	for i := range frames {
		frames[i] = motorFrame(now+int64(i)*int64(time.Millisecond), uint16(100+i), int16(i))
	}
	r.sendPaced(t, bridge, 1, frames)
	got := sub.WaitFor("20 envelopes", func(m []brokertest.Message) bool {
		return len(parse(t, m, "yukart/vehicle/")) >= 20
	})
	checkSeq(t, parse(t, got, "yukart/vehicle/"), 20)
	for _, m := range got {
		if m.Topic != DefaultStatusTopic && m.QoS != 1 {
			t.Fatalf("%s arrived at QoS %d, want 1", m.Topic, m.QoS)
		}
	}
	// Counted once acknowledged: the last PUBACK may come after the
	// subscriber has the envelope.
	waitUntil(t, "20 envelopes counted published", func() bool {
		return counter(t, r.m.published[pipeline.KindValue])-p0 >= 20
	})
	if n := counter(t, r.m.published[pipeline.KindValue]) - p0; n != 20 {
		t.Fatalf("got %v envelopes counted published, want 20", n)
	}
}
