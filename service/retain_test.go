package service

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/testkit/brokertest"
)

// deliver hands p to the service as the MQTT client does (receive), and
// then has the engine take what was queued, as runEngine does.
func deliver(s *Service, p *paho.Publish) {
	s.receive(p)
	select {
	case m := <-s.in:
		s.handleBatch(m.b, m.topic)
		s.free <- m.b
	default:
	}
}

// retainedCount is candec_raw_batches_invalid_total{reason="retained"}.
func retainedCount(t testing.TB, s *Service) float64 {
	t.Helper()
	return counter(t, s.m.invalid(errRetained))
}

// TestRetainedRawBatchNotDecoded: a batch left retained on the raw topic
// (one frame of yesterday, Speed 9999) is not decoded when the service
// starts against a real mosquitto: the subscription asks for no
// retained messages, so the broker does not even send it. Before, the
// service published Speed 9999 as a fresh value of the new epoch, at
// every start.
func TestRetainedRawBatchNotDecoded(t *testing.T) {
	b := brokertest.Start(t)
	if b.Embedded {
		t.Skip("needs mosquitto: retain handling is the broker's")
	}
	bridge := brokertest.Connect(t, b.URL)
	old := time.Now().Add(-24 * time.Hour).UnixNano()
	bridge.PublishQoS1(DefaultRawTopic, batch(t, 0, []frame.Frame{motorFrame(old, 9999, 0)}), true)

	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe(DefaultStatusTopic, "yukart/vehicle/#")
	for start := range 2 { // the defect came back at every start
		r := startService(t, testConfig(t, b.URL), loadTestDB(t))
		r.waitConnected(t, sub)
		now := time.Now().UnixNano()
		r.sendPaced(t, bridge, uint64(100*start+1), []frame.Frame{motorFrame(now, 10+uint16(start), 0)})
		want := float64(10 + start)
		sub.WaitFor("the fresh Speed", func(m []brokertest.Message) bool {
			for _, p := range parse(t, m, "yukart/vehicle/Speed") {
				if p.Float == want || p.Uint == uint64(want) || p.Int == int64(want) {
					return true
				}
			}
			return false
		})
		for _, p := range parse(t, sub.Messages(), "yukart/vehicle/Speed") {
			if p.Float == 9999 || p.Uint == 9999 || p.Int == 9999 || p.TS == old {
				t.Fatalf("start %d: the retained batch was decoded: %s published %+v", start, p.topic, p.Envelope)
			}
		}
		if got := counter(t, r.m.rawFrames); got != 1 {
			t.Errorf("start %d: got %v raw frames, want 1 (the fresh one only)", start, got)
		}
		if got := retainedCount(t, r.Service); got != 0 {
			t.Errorf("start %d: got %v retained deliveries, want 0: mosquitto honours retain handling 2 and sends none", start, got)
		}
		r.stop(t)
	}
}

// TestRetainedDeliveryDropped: a delivery that carries the retain flag
// (a broker that ignores retain handling) is dropped, whatever its
// payload, counted as invalid with reason="retained" and logged with
// the topic it came on; the next live batch is decoded.
func TestRetainedDeliveryDropped(t *testing.T) {
	var log bytes.Buffer
	s, err := New(testConfig(t, "mqtt://127.0.0.1:1"), loadTestDB(t), slog.New(slog.NewTextHandler(&log, nil)), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixNano()
	const topic = "yukart/can/raw"
	deliver(s, &paho.Publish{Topic: topic, Retain: true, Payload: batch(t, 0, []frame.Frame{motorFrame(now, 9999, 0)})})
	deliver(s, &paho.Publish{Topic: topic, Retain: true, Payload: []byte("not a batch")})
	if got, frames := retainedCount(t, s), counter(t, s.m.rawFrames); got != 2 || frames != 0 {
		t.Fatalf("two retained deliveries: got %v counted retained and %v frames decoded, want 2 and 0", got, frames)
	}
	if !strings.Contains(log.String(), "retained raw batch ignored") || !strings.Contains(log.String(), "topic="+topic) {
		t.Errorf("log %q: want a line naming the retained batch and its topic", log.String())
	}
	deliver(s, &paho.Publish{Topic: topic, Payload: batch(t, 1, []frame.Frame{motorFrame(now, 10, 0)})})
	if got := counter(t, s.m.rawFrames); got != 1 {
		t.Errorf("a live batch after them: got %v frames, want 1", got)
	}
	if got := counter(t, s.m.rawBatches); got != 3 {
		t.Errorf("got %v raw batches, want 3 (every delivery)", got)
	}
}

// TestInvalidBatchLogsItsTopic: the "invalid raw batch" line names the
// topic the batch came on, not the raw topic filter.
func TestInvalidBatchLogsItsTopic(t *testing.T) {
	var log bytes.Buffer
	cfg := testConfig(t, "mqtt://127.0.0.1:1")
	cfg.RawTopic = "yukart/can/+"
	s, err := New(cfg, loadTestDB(t), slog.New(slog.NewTextHandler(&log, nil)), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	deliver(s, &paho.Publish{Topic: "yukart/can/bridge7", Payload: []byte{1}})
	if !strings.Contains(log.String(), "invalid raw batch ignored") || !strings.Contains(log.String(), "topic=yukart/can/bridge7") {
		t.Errorf("log %q: want the invalid batch's own topic yukart/can/bridge7", log.String())
	}
}
