package service

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yukart/candec/internal/lab/mosquitto"
	"github.com/yukart/candec/internal/testkit/brokertest"
)

// lineLog counts log lines and keeps them, for tests that bound the log.
type lineLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.lines = append(l.lines, strings.TrimSuffix(string(p), "\n"))
	l.mu.Unlock()
	return len(p), nil
}

func (l *lineLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// TestClientIDTakeover: two services with the same client id against
// mosquitto. Each connection takes the session over from the other
// (MQTT v5 DISCONNECT 0x8E). They must back off rather than reconnect
// in a tight loop (before, each made thousands of connections in a few
// seconds and logged a line for each), count the takeovers, and say
// once, clearly, what is happening.
func TestClientIDTakeover(t *testing.T) {
	b := brokertest.Start(t)
	status := brokertest.Connect(t, b.URL)
	status.Subscribe(DefaultStatusTopic)
	db := loadTestDB(t)
	const run = 4 * time.Second
	const reconnectMax = time.Second
	var logs [2]lineLog
	var rs [2]*running
	for i := range rs {
		cfg := testConfig(t, b.URL)
		cfg.ClientID = "candec-twin"
		cfg.ReconnectMax = reconnectMax
		rs[i] = startServiceLog(t, cfg, db, &logs[i], slog.LevelInfo)
		if i == 0 {
			status.WaitFor("first service online", func(m []brokertest.Message) bool { return len(m) > 0 })
		}
	}
	time.Sleep(run)
	for i, r := range rs {
		r.stop(t)
		// Each wait is at least half its step of 50 ms, 100 ms, … up to
		// reconnectMax: within run, at most 1 + 10 connections.
		const maxConns = 11
		conns, takeovers := counter(t, r.m.connections), counter(t, r.m.takeovers)
		if conns > maxConns {
			t.Errorf("service %d: got %v connections in %v, want at most %d (the backoff schedule)", i, conns, run, maxConns)
		}
		if takeovers < 1 {
			t.Errorf("service %d: got candec_broker_takeovers_total %v, want at least 1", i, takeovers)
		}
		lines := logs[i].all()
		if len(lines) > 12 {
			t.Errorf("service %d: got %d log lines in %v, want at most 12:\n%s", i, len(lines), run, strings.Join(lines, "\n"))
		}
		said := 0
		for _, l := range lines {
			if strings.Contains(l, "another client took over client id candec-twin") {
				said++
			}
		}
		if said != 1 {
			t.Errorf("service %d: the takeover is said in %d log lines, want 1:\n%s", i, said, strings.Join(lines, "\n"))
		}
	}
	if n := len(statuses(status.Messages())); n > 2*11+4 {
		t.Errorf("the status topic changed %d times in %v; want it bounded by the connections", n, run)
	}
}

// TestBrokerGoneIsNoTakeover: mosquitto stopped two seconds after
// the service connected closes the connection as it does to the older
// of two connections with one client id, without a word; with no
// other client there, no takeover is counted and the log says what is
// known: the broker closed the connection so long after accepting it,
// another client with the id or the broker going down. (Before, it
// said at ERROR that another client took over the id.)
func TestBrokerGoneIsNoTakeover(t *testing.T) {
	b := brokertest.Start(t)
	status := brokertest.Connect(t, b.URL)
	status.Subscribe(DefaultStatusTopic)
	cfg := testConfig(t, b.URL)
	cfg.ClientID = "candec-alone"
	cfg.ReconnectMax = time.Second
	var log lineLog
	r := startServiceLog(t, cfg, loadTestDB(t), &log, slog.LevelInfo)
	status.WaitFor("online", func(m []brokertest.Message) bool { return len(m) > 0 })
	time.Sleep(2 * time.Second) // the broker dies a few seconds after accepting the service
	b.Stop()
	waitUntil(t, "a failed reconnection", func() bool { return counter(t, r.m.connectFailures.WithLabelValues(failNetwork)) >= 1 })
	r.stop(t)
	if got := counter(t, r.m.takeovers); got != 0 {
		t.Errorf("got candec_broker_takeovers_total %v with no other client, want 0", got)
	}
	lines := strings.Join(log.all(), "\n")
	if strings.Contains(lines, "took over") || strings.Contains(lines, "level=ERROR") {
		t.Errorf("the log speaks of a takeover:\n%s", lines)
	}
	if !strings.Contains(lines, "the broker closed the connection 2.") && !strings.Contains(lines, "the broker ended the connection") {
		t.Errorf("the log does not say the broker closed the connection, and after how long:\n%s", lines)
	}
}

// TestNoBrokerKeepsRetrying: with nothing listening at the broker's
// address, the service neither hangs nor gives up: it keeps trying,
// and says so in its log, its metrics and /healthz; it still stops
// promptly when asked.
func TestNoBrokerKeepsRetrying(t *testing.T) {
	port, err := mosquitto.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, fmt.Sprintf("mqtt://127.0.0.1:%d", port))
	var log lineLog
	r := startServiceLog(t, cfg, loadTestDB(t), &log, slog.LevelInfo)
	waitUntil(t, "three failed attempts", func() bool { return counter(t, r.m.connectFailures.WithLabelValues(failNetwork)) >= 3 })
	rec := httptest.NewRecorder()
	r.httpHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "retrying") {
		t.Errorf("/healthz: got %d %q, want 503 saying it is retrying", rec.Code, rec.Body.String())
	}
	lines := strings.Join(log.all(), "\n")
	if !strings.Contains(lines, "connect failed; retrying with backoff") || !strings.Contains(lines, "connection refused") {
		t.Errorf("the log does not say the connection is refused and retried:\n%s", lines)
	}
	start := time.Now()
	r.stop(t)
	if d := time.Since(start); d > cfg.ShutdownTimeout+3*time.Second {
		t.Errorf("stop took %v without a broker; want it bounded by shutdown_timeout %v", d, cfg.ShutdownTimeout)
	}
}
