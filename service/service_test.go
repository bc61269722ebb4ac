package service

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/testkit/brokertest"
)

// sendSecond publishes one second of frame time starting at base: Motor
// at 100 Hz with Speed = i and Torque = -i for frame i, State at 10 Hz
// in gear P for 0.5 s then D, as 10 batches of 100 ms.
func (r *running) sendSecond(t *testing.T, pub *brokertest.Client, base int64, seq uint64) uint64 {
	t.Helper()
	for b := range 10 {
		var fs []frame.Frame
		for i := b * 10; i < b*10+10; i++ {
			ts := base + int64(i)*int64(10*time.Millisecond)
			fs = append(fs, motorFrame(ts, uint16(i), int16(-i)))
			if i%10 == 0 {
				gear := byte(0)
				if i >= 50 {
					gear = 3
				}
				fs = append(fs, stateFrame(ts+1, gear))
			}
		}
		r.sendPaced(t, pub, seq, fs)
		seq += uint64(len(fs))
	}
	return seq
}

func lastIsStale(topics ...string) func([]brokertest.Message) bool {
	return func(msgs []brokertest.Message) bool {
		last := brokertest.Latest(msgs)
		for _, tp := range topics {
			if !bytes.Contains(last[tp].Payload, []byte(`"stale":true`)) {
				return false
			}
		}
		return true
	}
}

// TestPoliciesOverBroker checks what a subscriber sees for one second of
// frames: every signal, seq rising by one, the 20 Hz cap, the last value
// of the burst, the on-change state with its label, the stale marks once
// frames stop, and the retained state a late subscriber gets.
func TestPoliciesOverBroker(t *testing.T) {
	b := brokertest.Start(t)
	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe("yukart/vehicle/+", DefaultStatusTopic)
	r := startService(t, testConfig(t, b.URL), loadTestDB(t))
	r.waitConnected(t, sub)

	pub := brokertest.Connect(t, b.URL)
	base := time.Now().UnixNano()
	r.sendSecond(t, pub, base, 0)
	msgs := sub.WaitFor("stale marks on every topic", lastIsStale(testTopics...))

	topics := byTopic(parse(t, msgs, "yukart/vehicle/"))
	if len(topics) != len(testTopics) {
		t.Fatalf("got %d topics, want %d: %v", len(topics), len(testTopics), topics)
	}
	for tp, es := range topics {
		for i, e := range es {
			if e.Seq != uint64(i+1) {
				t.Fatalf("%s: envelope %d has seq %d, want %d", tp, i, e.Seq, i+1)
			}
			if e.Epoch != es[0].Epoch {
				t.Fatalf("%s: epoch changed from %d to %d", tp, es[0].Epoch, e.Epoch)
			}
		}
	}

	speed := topics["yukart/vehicle/Speed"]
	values := speed[:len(speed)-1] // the last one is the stale mark
	// 1 s of frames at 100 Hz under a 20 Hz cap: the first value at once,
	// then one per 50 ms window, each the latest of its window.
	if n := len(values); n < 19 || n > 21 {
		t.Errorf("got %d Speed values for 1 s at 100 Hz under a 20 Hz cap, want 20 or 21", n)
	}
	for i := 1; i < len(values)-1; i++ {
		if gap := values[i].TS - values[i-1].TS; gap != int64(50*time.Millisecond) {
			t.Errorf("Speed values %d and %d are %v apart in frame time; the latest of each 50 ms window is 50ms from the one before", i-1, i, time.Duration(gap))
		}
	}
	last := values[len(values)-1]
	if last.Int != 99 || last.TS != base+99*int64(10*time.Millisecond) {
		t.Errorf("last Speed value %d at ts %d; want the burst's final value 99 at %d", last.Int, last.TS, base+990*int64(time.Millisecond))
	}
	if string(last.Unit) != "rpm" {
		t.Errorf("Speed unit %q, want rpm", last.Unit)
	}
	if st := speed[len(speed)-1]; !st.Stale() || st.Int != 99 {
		t.Errorf("Speed's last envelope: stale=%v value %d; want stale with the last value 99", st.Stale(), st.Int)
	}

	gear := topics["yukart/vehicle/Gear"]
	var labels []string
	for _, e := range gear {
		labels = append(labels, string(e.Label))
	}
	if got := strings.Join(labels, ","); got != "P,D,D" || !gear[2].Stale() {
		t.Errorf("Gear envelopes labelled %s (last stale=%v); want P,D,D: on change, then the stale mark", got, gear[2].Stale())
	}

	// A subscriber that comes later gets the retained state of every
	// signal: the stale marks.
	late := brokertest.Connect(t, b.URL)
	late.Subscribe("yukart/vehicle/+")
	retained := parse(t, late.WaitFor("retained state", func(m []brokertest.Message) bool { return len(m) == len(testTopics) }), "yukart/vehicle/")
	for _, e := range retained {
		want := topics[e.topic][len(topics[e.topic])-1]
		if !e.retain || e.Seq != want.Seq || !e.Stale() {
			t.Errorf("%s retained: retain=%v seq %d stale=%v; want retained seq %d stale", e.topic, e.retain, e.Seq, e.Stale(), want.Seq)
		}
	}
}

// TestWindowStreamQoS1Msgpack: with QoS 1 and MessagePack, envelopes
// arrive at QoS 1 with the MessagePack content type, and the window
// stream carries the same envelopes, not retained, with its own seq.
func TestWindowStreamQoS1Msgpack(t *testing.T) {
	b := brokertest.Start(t)
	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe("yukart/vehicle/+", "yukart/window", DefaultStatusTopic)
	cfg := testConfig(t, b.URL)
	cfg.QoS = 1
	cfg.Encoding = "msgpack"
	cfg.WindowTopic = "yukart/window"
	r := startService(t, cfg, loadTestDB(t))
	r.waitConnected(t, sub)
	pub := brokertest.Connect(t, b.URL)
	r.sendSecond(t, pub, time.Now().UnixNano(), 0)
	msgs := sub.WaitFor("Speed's stale mark", func(m []brokertest.Message) bool {
		last := brokertest.Latest(m)["yukart/vehicle/Speed"]
		var e envelope.Envelope
		return last.Payload != nil && envelope.Parse(last.Payload, &e) == nil && e.Stale()
	})
	var signals, windowItems int
	var w envelope.Window
	var wseq uint64
	for _, m := range msgs {
		switch {
		case strings.HasPrefix(m.Topic, "yukart/vehicle/"):
			signals++
			if m.QoS != 1 || m.ContentType != envelope.ContentTypeMsgpack || !m.Retain {
				t.Fatalf("%s: QoS %d, content type %q, retain=%v; want QoS 1, %s, retained", m.Topic, m.QoS, m.ContentType, m.Retain, envelope.ContentTypeMsgpack)
			}
		case m.Topic == "yukart/window":
			if m.Retain {
				t.Fatal("a window message is retained; the window stream is not")
			}
			if err := envelope.ParseWindow(m.Payload, &w); err != nil {
				t.Fatal(err)
			}
			if w.Seq != wseq+1 {
				t.Fatalf("window seq %d after %d; want consecutive", w.Seq, wseq)
			}
			wseq = w.Seq
			windowItems += len(w.Items)
		}
	}
	if wseq == 0 || windowItems == 0 {
		t.Fatal("no window message with envelopes")
	}
	if windowItems > signals {
		t.Errorf("windows hold %d envelopes, the signal topics got %d; a window holds only envelopes published on them", windowItems, signals)
	}
}
