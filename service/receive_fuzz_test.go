package service

import (
	"errors"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/rawbatch"
)

// FuzzRawDelivery drives the raw batch path through the service as the
// live subscription does (receive, then the engine's handleBatch) with a
// delivery built from the input: any payload, any topic, the retain
// flag, QoS, and properties (content type, payload format, user
// property, response topic). It asserts there is no panic; that every
// delivery is counted; that a retained one is dropped and counted
// reason="retained"; that a valid batch reaches the engine frame by
// frame; and that an invalid one is counted under its rawbatch reason
// and decodes nothing. The topic and the properties change none of it.
func FuzzRawDelivery(f *testing.F) {
	now := time.Now().UnixNano()
	good, err := rawbatch.AppendBatch(nil, 7, []frame.Frame{motorFrame(now, 1234, -5), stateFrame(now, 2)})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good, "yukart/can/raw", false, byte(0), "", byte(0), "", "", "")
	f.Add(good, "yukart/can/raw", true, byte(1), "application/octet-stream", byte(1), "k", "v", "resp")
	f.Add([]byte{}, "", false, byte(2), "", byte(0), "", "", "")
	f.Add([]byte{1, 0, 0, 0}, "yukart/can/\x1b[2J", false, byte(0), "\xff", byte(9), "\x00", "", "")
	f.Add(good[:len(good)-1], "#", false, byte(0), "", byte(0), "", "", "")
	f.Add(append([]byte{2}, good[1:]...), "yukart/can/raw", false, byte(0), "", byte(0), "", "", "")

	// One service for every input, as on the car: counters are compared
	// before and after each delivery.
	s, err := New(testConfig(f, "mqtt://127.0.0.1:1"), loadTestDB(f), nil, prometheus.NewRegistry())
	if err != nil {
		f.Fatal(err)
	}
	s.out.setConnected(true)
	var spare []byte

	f.Fuzz(func(t *testing.T, payload []byte, topic string, retain bool, qos byte, ctype string, format byte, key, val, resp string) {
		p := &paho.Publish{Topic: topic, Payload: payload, Retain: retain, QoS: qos % 3,
			Properties: &paho.PublishProperties{ContentType: ctype, PayloadFormat: &format, ResponseTopic: resp}}
		if key != "" || val != "" {
			p.Properties.User = append(p.Properties.User, paho.UserProperty{Key: key, Value: val})
		}
		batches, frames := counter(t, s.m.rawBatches), counter(t, s.m.rawFrames)
		engineFrames := s.engine.Stats().Frames
		invalid := make([]float64, len(s.m.rawInvalid))
		for i, c := range s.m.rawInvalid {
			invalid[i] = counter(t, c)
		}

		deliver(s, p)
		for { // what was published goes to the broker, as the publisher does
			m, ok := s.out.take(spare)
			if !ok {
				break
			}
			spare = m.payload
		}

		if got := counter(t, s.m.rawBatches) - batches; got != 1 {
			t.Fatalf("one delivery: candec_raw_batches_total moved by %v, want 1", got)
		}
		var wantReason error // nil: a valid batch
		var n int
		if retain {
			wantReason = errRetained
		} else if b, err := rawbatch.Parse(payload); err != nil {
			wantReason = err
		} else {
			n = b.Len()
		}
		if got := counter(t, s.m.rawFrames) - frames; got != float64(n) {
			t.Fatalf("candec_raw_frames_total moved by %v, want %d", got, n)
		}
		if got := s.engine.Stats().Frames - engineFrames; got != uint64(n) {
			t.Fatalf("the engine got %d frames, want %d", got, n)
		}
		want := -1 // the index of the reason counted, or -1 for none
		if wantReason != nil {
			for i, r := range invalidReasons {
				if r.err == nil || errors.Is(wantReason, r.err) {
					want = i
					break
				}
			}
		}
		for i, c := range s.m.rawInvalid {
			d := counter(t, c) - invalid[i]
			if i == want && d != 1 || i != want && d != 0 {
				t.Fatalf("candec_raw_batches_invalid_total{reason=%q} moved by %v; the delivery (retain %v) is %v", invalidReasons[i].label, d, retain, wantReason)
			}
		}
	})
}
