package service

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/mqttclient"
	"github.com/yukart/candec/rawbatch"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testDBC is a small car: a 100 Hz motor message and a 10 Hz state
// message with a value table.
const testDBC = `VERSION ""
BU_: T
BO_ 256 Motor: 8 T
 SG_ Speed : 0|16@1+ (1,0) [0|10000] "rpm" T
 SG_ Torque : 16|16@1- (0.1,0) [-500|500] "Nm" T
BO_ 257 State: 1 T
 SG_ Gear : 0|8@1+ (1,0) [0|3] "" T
BA_DEF_ BO_ "GenMsgCycleTime" INT 0 10000;
BA_ "GenMsgCycleTime" BO_ 256 10;
BA_ "GenMsgCycleTime" BO_ 257 100;
VAL_ 257 Gear 0 "P" 1 "R" 2 "N" 3 "D";
`

// testPolicy caps every signal at 20 Hz (one envelope per 50 ms of frame
// time), publishes Gear on change, and marks a signal stale 300 ms after
// its last frame.
const testPolicy = `defaults:
  max_rate: 20
  stale_after: 300ms
rules:
  - match: Gear
    max_rate: 0
    on_change: true
`

var testTopics = []string{"yukart/vehicle/Speed", "yukart/vehicle/Torque", "yukart/vehicle/Gear"}

func loadTestDB(t testing.TB) *dbc.Database {
	t.Helper()
	f, err := dbc.Parse("test.dbc", []byte(testDBC))
	if err != nil {
		t.Fatal(err)
	}
	db, err := dbc.Compile(f)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// testConfig is a config for the broker at url with the test policy.
func testConfig(t testing.TB, url string) Config {
	t.Helper()
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte(testPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	c := DefaultConfig()
	c.Broker = url
	c.ClientID = "candec-test-" + t.Name()
	c.DBC = []string{"test.dbc"}
	c.Policy = pol
	c.MetricsAddr = ""
	c.ReconnectMax = 200 * time.Millisecond
	return c
}

// running is a service started by startService.
type running struct {
	*Service
	reg    *prometheus.Registry
	cancel context.CancelFunc
	done   chan error
}

// startService runs a service until the test ends (or stop is called).
func startService(t *testing.T, cfg Config, db *dbc.Database) *running {
	t.Helper()
	return startServiceLog(t, cfg, db, testWriter{t}, slog.LevelDebug)
}

// startServiceLog is startService with the log written to w at level.
func startServiceLog(t *testing.T, cfg Config, db *dbc.Database, w io.Writer, level slog.Level) *running {
	t.Helper()
	reg := prometheus.NewRegistry()
	log := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
	s, err := New(cfg, db, log, reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{Service: s, reg: reg, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- s.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop cancels the service and waits for Run, which must return nil.
func (r *running) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case err, ok := <-r.done:
		if ok && err != nil {
			t.Errorf("Run returned %v; want nil after a clean shutdown", err)
		}
		if ok {
			close(r.done)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return within 20 s of the context ending")
	}
}

// waitConnected waits until the service has subscribed to the raw
// topic, so that what a test publishes next reaches it.
func (r *running) waitConnected(t *testing.T, status *brokertest.Client) {
	t.Helper()
	status.WaitFor("status online", func(m []brokertest.Message) bool {
		for _, x := range m {
			if x.Topic == DefaultStatusTopic && string(x.Payload) == StatusOnline {
				return true
			}
		}
		return false
	})
	// "online" is published before the subscription; the connection
	// counter moves first, the subscription follows within one round
	// trip. Wait for the subscription by probing with an empty batch.
	waitUntil(t, "raw subscription", func() bool {
		status.Publish(DefaultRawTopic, batch(t, 0, nil), false)
		time.Sleep(5 * time.Millisecond)
		return counter(t, r.m.rawBatches) > 0
	})
}

// sendPaced publishes a raw batch and waits until the service has
// decoded its frames and handed every envelope to the MQTT client. A
// bridge sends a batch every 10 ms; a test that sent faster would see
// envelopes coalesce in the outbox, as they do behind a slow broker.
func (r *running) sendPaced(t *testing.T, pub *brokertest.Client, seq uint64, frames []frame.Frame) {
	t.Helper()
	want := counter(t, r.m.decoded) + counter(t, r.m.unknownID) + float64(len(frames))
	pub.Publish(DefaultRawTopic, batch(t, seq, frames), false)
	waitUntil(t, "batch decoded and published", func() bool {
		return counter(t, r.m.decoded)+counter(t, r.m.unknownID) >= want && r.out.len() == 0
	})
}

// rawPublisher connects a bridge's client to the broker at url and
// returns its publisher on the raw topic. The client disconnects when
// the test ends, before the service and the broker stop.
func rawPublisher(t *testing.T, url, clientID string) *mqttclient.Publisher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cm, err := mqttclient.Connect(ctx, mqttclient.Config{Settings: mqttclient.Settings{Broker: url, ClientID: clientID}})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		defer cancel()
		dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer dcancel()
		_ = cm.Disconnect(dctx)
	})
	if err := cm.AwaitConnection(ctx); err != nil {
		t.Fatal(err)
	}
	return mqttclient.NewPublisher(cm, DefaultRawTopic, 0, false, "")
}

// waitUntil polls cond every few milliseconds until it holds, and fails
// the test after 15 s.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within 15 s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func counter(t testing.TB, c prometheus.Metric) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}

// batch encodes frames as one raw batch with first seq seq.
func batch(t testing.TB, seq uint64, frames []frame.Frame) []byte {
	t.Helper()
	b, err := rawbatch.AppendBatch(nil, seq, frames)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func motorFrame(ts int64, speed uint16, torque int16) frame.Frame {
	f := frame.Frame{Time: ts, ID: 256, Len: 8}
	f.Data[0], f.Data[1] = byte(speed), byte(speed>>8)
	f.Data[2], f.Data[3] = byte(uint16(torque)), byte(uint16(torque)>>8)
	return f
}

func stateFrame(ts int64, gear byte) frame.Frame {
	f := frame.Frame{Time: ts, ID: 257, Len: 1}
	f.Data[0] = gear
	return f
}

// parsed is an envelope with its topic, as a subscriber reads it.
type parsed struct {
	topic string
	envelope.Envelope
	retain bool
}

func parse(t testing.TB, msgs []brokertest.Message, prefix string) []parsed {
	t.Helper()
	var out []parsed
	for _, m := range msgs {
		if len(m.Topic) < len(prefix) || m.Topic[:len(prefix)] != prefix {
			continue
		}
		var p parsed
		if err := envelope.Parse(m.Payload, &p.Envelope); err != nil {
			t.Fatalf("%s: %q: %v", m.Topic, m.Payload, err)
		}
		if m.ContentType != envelope.ContentTypeJSON {
			t.Fatalf("%s: content type %q; want %q", m.Topic, m.ContentType, envelope.ContentTypeJSON)
		}
		p.topic, p.retain = m.Topic, m.Retain
		p.Unit = append([]byte(nil), p.Unit...)
		p.Label = append([]byte(nil), p.Label...)
		out = append(out, p)
	}
	return out
}

func byTopic(ps []parsed) map[string][]parsed {
	m := map[string][]parsed{}
	for _, p := range ps {
		m[p.topic] = append(m[p.topic], p)
	}
	return m
}

// testWriter sends log lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Logf("%s", p)
	return len(p), nil
}

// appendBatch is rawbatch.AppendBatch, for tests that must not allocate.
var appendBatch = rawbatch.AppendBatch
