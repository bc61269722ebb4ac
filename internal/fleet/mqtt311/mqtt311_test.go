package mqtt311

import (
	"context"
	"testing"
	"time"

	"github.com/yukart/candec/internal/lab/mosquitto"
	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/mqttclient"
)

// TestPublishAcked: through a real mosquitto, PublishAcked returns once
// the broker acknowledged the message (nothing is left waiting), a
// retained one is kept for a subscriber that comes after it, and on a
// closed client it fails instead of waiting.
func TestPublishAcked(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m := brokertest.StartMosquitto(t, mosquitto.Options{})
	pub, err := Dial(ctx, mqttclient.Settings{Broker: m.URL, ClientID: "pusher"}, func(_, _ []byte, _ int64) {})
	if err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{"fleet/kart01/yukart/policy", "fleet/kart02/yukart/policy"} {
		if err := pub.PublishAcked(ctx, topic, []byte("v1 "+topic), true); err != nil {
			t.Fatal(err)
		}
		if waiting, acked := pub.Unacked(); waiting != 0 || acked == 0 {
			t.Fatalf("after PublishAcked on %s: %d waiting, %d acknowledged; want 0 waiting", topic, waiting, acked)
		}
	}
	got := make(chan string, 4)
	sub, err := Dial(ctx, mqttclient.Settings{Broker: m.URL, ClientID: "car"}, func(topic, payload []byte, _ int64) {
		got <- string(topic) + "=" + string(payload)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if err := sub.Subscribe(ctx, "fleet/kart01/yukart/policy"); err != nil {
		t.Fatal(err)
	}
	select {
	case g := <-got:
		if want := "fleet/kart01/yukart/policy=v1 fleet/kart01/yukart/policy"; g != want {
			t.Errorf("got %q, want %q", g, want)
		}
	case <-ctx.Done():
		t.Fatal("the retained message never came")
	}
	if err := pub.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pub.PublishAcked(ctx, "fleet/kart01/yukart/policy", []byte("late"), true); err == nil || ctx.Err() != nil {
		t.Errorf("PublishAcked on a closed client: %v (context: %v), want an error before the deadline", err, ctx.Err())
	}
}
