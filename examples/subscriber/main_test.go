package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/internal/testkit/brokertest"
)

// syncBuffer is a bytes.Buffer safe for the subscriber's goroutines
// and the test's.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits until out holds want, or fails the test.
func waitFor(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the subscriber did not print %q; it printed:\n%s", want, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// envelopeJSON is an envelope of value v, seq and epoch, as candec
// publishes it.
func envelopeJSON(v float64, seq, epoch uint64) []byte {
	e := envelope.Envelope{TS: 1760000000000000000 + int64(seq), Seq: seq, Epoch: epoch}
	e.SetFloat(v)
	return envelope.AppendJSON(nil, &e)
}

// TestSubscriberCountsLoss runs the subscriber against a real broker and
// publishes envelopes with gaps in their seq: it prints each gap and
// each topic's loss, and a restart of the publisher loses nothing.
func TestSubscriberCountsLoss(t *testing.T) {
	b := brokertest.Start(t)
	out := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"--broker", b.URL, "--every", "0"}, out) }()
	waitFor(t, out, "subscribed to yukart/vehicle/+ on "+b.URL)

	pub := brokertest.Connect(t, b.URL)
	defer pub.Close()
	for _, m := range []struct {
		topic      string
		seq, epoch uint64
	}{
		{"Speed", 1, 7}, {"Speed", 2, 7}, {"Speed", 4, 7}, // 3 lost
		{"Gear", 1, 7}, {"Gear", 2, 7}, {"Gear", 3, 7},
		{"Temp", 10, 7}, {"Temp", 13, 7}, {"Temp", 14, 7}, // 11 and 12 lost
		{"Temp", 1, 8}, // the decoder restarted: no loss
	} {
		pub.PublishQoS1("yukart/vehicle/"+m.topic, envelopeJSON(1.5, m.seq, m.epoch), false)
	}
	pub.PublishQoS1("yukart/vehicle/Bad", []byte("not an envelope"), false)
	waitFor(t, out, `"yukart/vehicle/Bad": not an envelope`)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	got := out.String()
	for _, want := range []string{
		`"yukart/vehicle/Speed": 1 lost before seq 4` + "\n",
		`"yukart/vehicle/Temp": 2 lost before seq 13` + "\n",
		`"yukart/vehicle/Temp": publisher restarted (epoch 8, seq 1)` + "\n",
		`"yukart/vehicle/Gear": received 3, lost 0 (0.00 %), duplicates 0, restarts 0` + "\n",
		`"yukart/vehicle/Speed": received 3, lost 1 (25.00 %), duplicates 0, restarts 0` + "\n",
		`"yukart/vehicle/Temp": received 4, lost 2 (33.33 %), duplicates 0, restarts 1` + "\n",
		"1 messages were no envelope\n",
		"all 3 topics: received 10, lost 3 (23.08 %), duplicates 0, restarts 1\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the subscriber did not print %q; it printed:\n%s", want, got)
		}
	}
	if strings.Contains(got, `"yukart/vehicle/Gear": `+"1 lost") {
		t.Errorf("the subscriber counted loss on Gear, whose seq has no gap:\n%s", got)
	}
}

// TestSubscriberBadFlags checks that bad flags and an unreachable
// broker are errors, not a silent exit.
func TestSubscriberBadFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--every", "-1s"}, "must not be negative"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--broker", "127.0.0.1:1883"}, "must be mqtt://host:port"},
	} {
		err := run(context.Background(), tt.args, &syncBuffer{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("run %q: got error %v, want one saying %q", tt.args, err, tt.want)
		}
	}
}
