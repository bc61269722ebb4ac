package broker_test

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/yukart/candec/internal/lab/broker"
	"github.com/yukart/candec/internal/testkit/brokertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func start(t *testing.T) *broker.Broker {
	t.Helper()
	b, err := broker.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestRetainedWithContentType(t *testing.T) {
	b := start(t)
	if !strings.HasPrefix(b.URL(), "mqtt://127.0.0.1:") || strings.HasSuffix(b.Addr(), ":0") {
		t.Fatalf("got URL %q, Addr %q; want mqtt://127.0.0.1:<port>", b.URL(), b.Addr())
	}
	pub := brokertest.Connect(t, b.URL())
	pub.PublishRetained(t, "yukart/vehicle/speed", []byte(`{"value":1}`), "application/json")
	pub.Close()

	sub := brokertest.Connect(t, b.URL())
	sub.Subscribe("yukart/vehicle/+")
	msgs := sub.WaitFor("retained message", func(m []brokertest.Message) bool { return len(m) > 0 })
	m := msgs[0]
	if m.Topic != "yukart/vehicle/speed" || !bytes.Equal(m.Payload, []byte(`{"value":1}`)) || !m.Retain || m.ContentType != "application/json" {
		t.Fatalf("got %s %q retain=%v content type %q; want yukart/vehicle/speed {\"value\":1} retained application/json", m.Topic, m.Payload, m.Retain, m.ContentType)
	}
}

func TestLiveDelivery(t *testing.T) {
	b := start(t)
	sub := brokertest.Connect(t, b.URL())
	sub.Subscribe("a/#")
	pub := brokertest.Connect(t, b.URL())
	for i := range 100 {
		pub.Publish("a/b", []byte{byte(i)}, false)
	}
	msgs := sub.WaitFor("100 messages", func(m []brokertest.Message) bool { return len(m) == 100 })
	for i, m := range msgs {
		if m.Payload[0] != byte(i) {
			t.Fatalf("message %d: got payload %d, want %d (order lost)", i, m.Payload[0], i)
		}
	}
}

func TestContextEndsBroker(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	b, err := broker.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	b.Close() // waits for the shutdown the context started
	if c, err := net.DialTimeout("tcp", b.Addr(), time.Second); err == nil {
		c.Close()
		t.Fatalf("broker still accepts connections on %s after its context ended", b.Addr())
	}
}

func TestBusyAddress(t *testing.T) {
	b := start(t)
	_, err := broker.Start(context.Background(), b.Addr())
	if err == nil || !strings.HasPrefix(err.Error(), "broker: listen on "+b.Addr()) {
		t.Fatalf("got error %v; want broker: listen on %s: …", err, b.Addr())
	}
}
