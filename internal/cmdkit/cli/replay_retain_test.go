package cli

import (
	"testing"

	"github.com/yukart/candec/internal/testkit/brokertest"
)

// TestReplayNotRetained: replay publishes its raw batches without the
// retain flag, so no batch stays on the broker for a decoder that starts
// later to decode again. A subscriber with retain-as-published sees the
// flag as replay set it, and a late subscriber finds nothing retained.
func TestReplayNotRetained(t *testing.T) {
	b := brokertest.Start(t)
	live := brokertest.Connect(t, b.URL)
	live.Subscribe("yukart/can/raw")
	st, err := replayed(t, "--broker", b.URL, shortCapture(t))
	if err != nil || st.Frames == 0 {
		t.Fatalf("replay: %v, %d frames", err, st.Frames)
	}
	msgs := live.WaitFor("every batch", func(m []brokertest.Message) bool { return uint64(len(m)) >= st.Batches })
	for i, m := range msgs {
		if m.Retain {
			t.Fatalf("batch %d of %d was published retained", i, len(msgs))
		}
	}
	// A late subscriber: anything retained comes before the marker.
	late := brokertest.Connect(t, b.URL)
	late.Subscribe("yukart/can/raw", "test/marker")
	live.Publish("test/marker", []byte("m"), false)
	got := late.WaitFor("the marker", func(m []brokertest.Message) bool { return len(m) > 0 && m[len(m)-1].Topic == "test/marker" })
	if len(got) != 1 {
		t.Errorf("a late subscriber got %d messages before the marker, want none retained on the raw topic", len(got)-1)
	}
}
