package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/internal/cmdkit/watch"
	"github.com/yukart/candec/internal/testkit/brokertest"
)

// TestWatchBadInput: flags out of range and invalid filters are a
// one-line error naming them and exit 2, before any connection (the
// broker URL here is unreachable: a connection would take the timeout).
func TestWatchBadInput(t *testing.T) {
	url := unreachableURL(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--interval", "0"}, "--interval must be between 50ms and 1h0m0s, got 0s"},
		{[]string{"--interval", "-1s"}, "--interval must be between 50ms and 1h0m0s, got -1s"},
		{[]string{"--duration", "-1s"}, "--duration must not be negative, got -1s"},
		{[]string{"--stale", "0"}, "--stale must be positive, got 0s"},
		{[]string{"--connect-timeout", "0"}, "--connect-timeout must be between 1ms and 5m0s, got 0s"},
		{[]string{"--max-topics", "0"}, "--max-topics must be from 1 to 10000000, got 0"},
		{[]string{"a/#/b"}, `bad topic filter "a/#/b": '#' must be the whole last level`},
		{[]string{"yukart/vehicle/+", "a+"}, `bad topic filter "a+": '+' must be a whole level`},
		{[]string{""}, "bad topic filter: empty"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"watch", "--broker", url, "--connect-timeout", "20s"}, tc.args...)
			err := run(context.Background(), Env{nil, &stdout, &stderr}, args)
			if err == nil || ExitCode(err) != 2 || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v (exit %d), want one line containing %q and exit 2", err, ExitCode(err), tc.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("printed %q, want no summary", stdout.String())
			}
		})
	}
}

// TestWatchUnreachable: a broker that does not answer is an error naming
// it once --connect-timeout has passed, not a summary of 0 topics.
func TestWatchUnreachable(t *testing.T) {
	checkUnreachable(t, "watch", "--quiet")
}

// TestWatchInvalidFilterNoLoop: an invalid filter never reaches the
// broker, which would drop the client for it, again on each reconnection.
func TestWatchInvalidFilterNoLoop(t *testing.T) {
	b := brokertest.Start(t)
	err := run(context.Background(), Env{nil, &bytes.Buffer{}, &bytes.Buffer{}}, []string{"watch", "--broker", b.URL, "--duration", "1s", "a/#/b"})
	if err == nil || ExitCode(err) != 2 {
		t.Fatalf("got %v, want the filter refused with exit 2", err)
	}
	if log := b.LogFile(); log != "" {
		data, _ := os.ReadFile(log)
		if n := strings.Count(string(data), "New client connected"); n != 0 {
			t.Errorf("mosquitto saw %d connections, want none", n)
		}
	}
}

// TestWatchRetained: with no traffic, the retained signals and status are
// shown as retained: no latency (which was their age: 78 s), no stale
// status, nothing older than the stale limit.
func TestWatchRetained(t *testing.T) {
	b := brokertest.Start(t)
	pub := brokertest.Connect(t, b.URL)
	old := time.Now().Add(-78 * time.Second).UnixNano()
	for i, name := range []string{"yukart/vehicle/A", "yukart/vehicle/B"} {
		e := envelope.Envelope{TS: old, Seq: uint64(10 + i), Epoch: 7}
		e.SetFloat(1.5)
		pub.PublishQoS1(name, envelope.AppendJSON(nil, &e), true)
	}
	pub.PublishQoS1("yukart/decoder/status", []byte("online"), true)
	var stdout bytes.Buffer
	err := run(context.Background(), Env{nil, &stdout, &bytes.Buffer{}}, []string{"watch", "--broker", b.URL, "--json", "--duration", "1500ms", "--stale", "500ms"})
	if err != nil {
		t.Fatal(err)
	}
	var s watch.Summary
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Fatalf("%v in %s", err, stdout.String())
	}
	if s.Topics != 3 || s.Retained != 3 || s.Messages != 0 || s.Latency.N != 0 || s.Old != 0 {
		t.Errorf("got %d topics, %d retained, %d live, %d latency samples, %d old; want 3, 3, 0, 0, 0",
			s.Topics, s.Retained, s.Messages, s.Latency.N, s.Old)
	}
}

// TestWatchMaxTopics: through a real broker, watch follows
// --max-topics topics; the messages on the others are counted in the
// summary and said, not followed.
func TestWatchMaxTopics(t *testing.T) {
	b := brokertest.Start(t)
	pub := brokertest.Connect(t, b.URL)
	for i := range 5 {
		pub.PublishQoS1(fmt.Sprintf("yukart/vehicle/S%d", i), []byte("1"), true)
	}
	var stdout bytes.Buffer
	err := run(context.Background(), Env{nil, &stdout, &bytes.Buffer{}}, []string{"watch", "--broker", b.URL, "--max-topics", "2", "--duration", "1500ms", "--quiet"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout.String(), "2 topics,") || !strings.Contains(stdout.String(), "not followed, over the bound of 2 topics (--max-topics): 3 messages on new topics") {
		t.Errorf("summary:\n%s\nwant 2 topics followed and 3 messages not", stdout.String())
	}
}

// TestWatchJitter: through a real broker, watch learns a cyclic topic's
// period from the ts of its values (20 ms, exactly as stamped) and
// measures its arrivals against it; a topic whose values come at
// irregular times is not cyclic.
func TestWatchJitter(t *testing.T) {
	b := brokertest.Start(t)
	pub := brokertest.Connect(t, b.URL)
	var stdout bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), Env{nil, &stdout, &bytes.Buffer{}}, []string{"watch", "--broker", b.URL, "--json", "--duration", "3s", "yukart/vehicle/+"})
	}()
	time.Sleep(500 * time.Millisecond) // the watch subscribes; values before that are missed, not wrong
	base := time.Now().UnixNano()
	gaps := []int64{5, 35, 10, 70, 15}
	var irregular int64
	for i := range 40 {
		e := envelope.Envelope{TS: base + int64(i)*20e6, Seq: uint64(i + 1), Epoch: 7}
		e.SetFloat(float64(i))
		pub.Publish("yukart/vehicle/Cyclic", envelope.AppendJSON(nil, &e), false)
		irregular += gaps[i%len(gaps)] * 1e6
		e.TS = base + irregular
		pub.Publish("yukart/vehicle/OnChange", envelope.AppendJSON(nil, &e), false)
		time.Sleep(20 * time.Millisecond)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var s watch.Summary
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Fatalf("%v in %s", err, stdout.String())
	}
	by := map[string]watch.TopicStats{}
	for _, st := range s.TopicStats {
		by[st.Topic] = st
	}
	if p := by["yukart/vehicle/Cyclic"].Period; p != 20*time.Millisecond {
		t.Errorf("cyclic topic: period %v, want 20ms", p)
	}
	if p := by["yukart/vehicle/OnChange"].Period; p != 0 {
		t.Errorf("irregular topic: period %v, want none", p)
	}
	if s.Jitter.Topics != 1 || s.Jitter.N == 0 {
		t.Errorf("jitter = %+v, want intervals of 1 cyclic topic", s.Jitter)
	}
}
