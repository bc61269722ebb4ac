package service

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/rawbatch"
)

func statuses(msgs []brokertest.Message) []string {
	var s []string
	for _, m := range msgs {
		if m.Topic == DefaultStatusTopic {
			s = append(s, string(m.Payload))
		}
	}
	return s
}

func statusesAre(want ...string) func([]brokertest.Message) bool {
	return func(msgs []brokertest.Message) bool {
		return strings.Join(statuses(msgs), ",") == strings.Join(want, ",")
	}
}

// TestStatusWillAndShutdown: "online" on connect; when the connection
// breaks without a DISCONNECT the broker publishes the will, "offline";
// the service reconnects and says "online" again; a clean shutdown
// publishes "offline", retained, and Run returns nil.
func TestStatusWillAndShutdown(t *testing.T) {
	b := brokertest.Start(t)
	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe(DefaultStatusTopic)
	r := startService(t, testConfig(t, b.URL), loadTestDB(t))
	sub.WaitFor("online", statusesAre("online"))

	r.conn.Load().TerminateConnectionForTest() // the TCP connection closes under the client
	sub.WaitFor("the will, then online again", statusesAre("online", "offline", "online"))

	r.stop(t)
	msgs := sub.WaitFor("offline on shutdown", statusesAre("online", "offline", "online", "offline"))
	if last := msgs[len(msgs)-1]; !last.Retain || last.ContentType != statusContentType {
		t.Errorf("offline: retain=%v content type %q; want retained %s", last.Retain, last.ContentType, statusContentType)
	}
	late := brokertest.Connect(t, b.URL)
	late.Subscribe(DefaultStatusTopic)
	late.WaitFor("retained offline", statusesAre("offline"))
}

// TestBrokerRestart kills mosquitto mid-stream and starts it again on the
// same port, without persistence: the service reconnects, says online,
// republishes every signal's latest state (retained, seq continuing,
// same epoch) and decodes the frames that come after.
func TestBrokerRestart(t *testing.T) {
	b := brokertest.Start(t)
	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe("yukart/vehicle/+", DefaultStatusTopic)
	cfg := testConfig(t, b.URL)
	r := startService(t, cfg, loadTestDB(t))
	r.waitConnected(t, sub)
	pub := brokertest.Connect(t, b.URL)
	base := time.Now().UnixNano()
	var seq uint64
	var frames []frame.Frame
	for i := range 20 {
		ts := base + int64(i)*int64(10*time.Millisecond)
		frames = append(frames, motorFrame(ts, uint16(1000+i), 7), stateFrame(ts, 2))
	}
	r.sendPaced(t, pub, seq, frames)
	seq += uint64(len(frames))
	// Wait for the stale marks: then nothing more comes until new frames.
	before := byTopic(parse(t, sub.WaitFor("stale marks", lastIsStale(testTopics...)), "yukart/vehicle/"))
	lastBefore := map[string]parsed{}
	for tp, es := range before {
		lastBefore[tp] = es[len(es)-1]
	}

	b.Stop()
	waitUntil(t, "service notices the broker is gone", func() bool { return !r.connected.Load() })
	b.Restart()

	after := brokertest.Connect(t, b.URL)
	after.Subscribe("yukart/vehicle/+", DefaultStatusTopic)
	msgs := after.WaitFor("republished state of every signal", func(m []brokertest.Message) bool {
		return len(brokertest.Latest(m)) == 4
	})
	if got := statuses(msgs); len(got) == 0 || got[len(got)-1] != StatusOnline {
		t.Fatalf("status after restart %v; want online", got)
	}
	for tp, es := range byTopic(parse(t, msgs, "yukart/vehicle/")) {
		e, prev := es[0], lastBefore[tp]
		if !e.retain || e.Epoch != prev.Epoch || e.Seq != prev.Seq+1 || e.Float64() != prev.Float64() || !e.Stale() {
			t.Errorf("%s after restart: retain=%v epoch %d seq %d value %v stale=%v; want the state before again: retained, epoch %d, seq %d, value %v, stale",
				tp, e.retain, e.Epoch, e.Seq, e.Float64(), e.Stale(), prev.Epoch, prev.Seq+1, prev.Float64())
		}
	}

	// The bridge reconnects too and goes on; so does the service.
	pub2 := brokertest.Connect(t, b.URL)
	r.waitConnectedAgain(t, pub2)
	next := []frame.Frame{motorFrame(base+int64(time.Second), 4242, 7)}
	r.sendPaced(t, pub2, seq, next)
	msgs = after.WaitFor("Speed 4242 after the restart", func(m []brokertest.Message) bool {
		for _, e := range parse(t, m, "yukart/vehicle/Speed") {
			if e.Int == 4242 {
				return true
			}
		}
		return false
	})
	speed := parse(t, msgs, "yukart/vehicle/Speed")
	for i := 1; i < len(speed); i++ {
		if speed[i].Seq != speed[i-1].Seq+1 {
			t.Errorf("Speed after restart: seq %d then %d; want consecutive", speed[i-1].Seq, speed[i].Seq)
		}
	}
}

// waitConnectedAgain waits until the service's raw subscription on a
// restarted broker takes batches.
func (r *running) waitConnectedAgain(t *testing.T, c *brokertest.Client) {
	t.Helper()
	n := counter(t, r.m.rawBatches)
	waitUntil(t, "raw subscription after the restart", func() bool {
		c.Publish(DefaultRawTopic, batch(t, 0, nil), false)
		time.Sleep(5 * time.Millisecond)
		return counter(t, r.m.rawBatches) > n
	})
}

// TestRawCounters: invalid batches are counted and skipped, seq gaps
// count lost frames, a seq going back counts a bridge restart.
func TestRawCounters(t *testing.T) {
	b := brokertest.Start(t)
	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe("yukart/vehicle/+", DefaultStatusTopic)
	r := startService(t, testConfig(t, b.URL), loadTestDB(t))
	r.waitConnected(t, sub)
	base := time.Now().UnixNano()
	f := func(i int) []frame.Frame { return []frame.Frame{motorFrame(base+int64(i)*1e7, uint16(i), 0)} }

	// waitConnected's probes were empty batches at seq 0.
	r.sendPaced(t, sub, 0, f(0))
	sub.Publish(DefaultRawTopic, []byte{1, 0, 5, 0}, false) // short
	sub.Publish(DefaultRawTopic, []byte("not a batch at all"), false)
	r.sendPaced(t, sub, 5, f(1)) // 1..4 lost
	r.sendPaced(t, sub, 3, f(2)) // bridge restart: 0..2 lost
	r.sendPaced(t, sub, 4, f(3))

	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"invalid batches, short", counter(t, r.m.invalid(rawbatch.ErrShort)), 1},
		{"invalid batches, version", counter(t, r.m.invalid(rawbatch.ErrVersion)), 1},
		{"lost frames", counter(t, r.m.rawLost), 4 + 3},
		{"bridge restarts", counter(t, r.m.bridgeRestarts), 1},
		{"decoded frames", counter(t, r.m.decoded), 4},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestHealthzAndMetrics: /healthz follows the broker connection, and
// /metrics serves the service's metrics.
func TestHealthzAndMetrics(t *testing.T) {
	b := brokertest.Start(t)
	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe(DefaultStatusTopic)
	cfg := testConfig(t, b.URL)
	cfg.MetricsAddr = "127.0.0.1:0"
	r := startService(t, cfg, loadTestDB(t))
	srv := httptest.NewServer(r.httpHandler())
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	r.waitConnected(t, sub)
	if code, body := get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz while connected: %d %q; want 200", code, body)
	}
	_, body := get("/metrics")
	for _, name := range []string{"candec_raw_batches_total", "candec_raw_frames_lost_total", "candec_envelopes_published_total{kind=\"value\"}",
		"candec_envelopes_suppressed_total{reason=\"coalesced\"}", "candec_publish_queue_depth", "candec_publish_latency_seconds_bucket",
		"candec_broker_connected 1"} {
		if !strings.Contains(body, name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	b.Stop()
	waitUntil(t, "disconnected", func() bool { return !r.connected.Load() })
	if code, body := get("/healthz"); code != http.StatusServiceUnavailable {
		t.Errorf("/healthz with the broker down: %d %q; want 503", code, body)
	}
}

// TestMetricsAddrInUse: Run fails at once, naming the key, when the
// metrics address cannot be bound.
func TestMetricsAddrInUse(t *testing.T) {
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cfg := testConfig(t, "mqtt://127.0.0.1:1")
	cfg.MetricsAddr = l.Addr().String()
	s, err := New(cfg, loadTestDB(t), nil, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "metrics_addr") {
		t.Fatalf("Run: got %v; want an error naming metrics_addr", err)
	}
}
