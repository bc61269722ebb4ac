package mqtt311

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/yukart/candec/internal/lab/mosquitto"
	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/mqttclient"
)

// TestAgainstMosquitto subscribes with this client and publishes with
// paho through a private mosquitto.
func TestAgainstMosquitto(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m := brokertest.StartMosquitto(t, mosquitto.Options{})

	var (
		mu  sync.Mutex
		got []string
	)
	sub, err := Dial(ctx, mqttclient.Settings{Broker: m.URL, ClientID: "sub"}, func(topic, payload []byte, now int64) {
		mu.Lock()
		got = append(got, string(topic)+"="+string(payload))
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Subscribe(ctx, "a/+", "b"); err != nil {
		t.Fatal(err)
	}
	// An invalid filter: the broker refuses it or drops the connection.
	bad, err := Dial(ctx, mqttclient.Settings{Broker: m.URL, ClientID: "bad"}, func(_, _ []byte, _ int64) {})
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.Subscribe(ctx, "bad/#/filter"); err == nil {
		t.Errorf("Subscribe to an invalid filter: nil error, want one")
	}
	bad.Close()

	cm, err := mqttclient.Connect(ctx, mqttclient.Config{Settings: mqttclient.Settings{Broker: m.URL, ClientID: "pub"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := cm.AwaitConnection(ctx); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 100 {
		topic := fmt.Sprintf("a/%d", i%3)
		payload := bytes.Repeat([]byte{'x'}, i*50)
		if _, err := cm.Publish(ctx, &paho.Publish{Topic: topic, Payload: payload}); err != nil {
			t.Fatal(err)
		}
		want = append(want, topic+"="+string(payload))
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = cm.Disconnect(ctx)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(want) {
		t.Fatalf("received %d messages, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("message %d: got %.40q, want %.40q", i, got[i], want[i])
		}
	}
	if err := sub.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if !errors.Is(sub.Err(), ErrClosed) {
		t.Errorf("Err after Close = %v, want ErrClosed", sub.Err())
	}
}

// TestCloseAfterConnectionEnded closes a client whose connection the
// broker has already ended: its reader has closed the connection, and
// Close must not report the second close ("use of closed network
// connection") as an error. Close after a DISCONNECT races the same way,
// only not every time.
func TestCloseAfterConnectionEnded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m := brokertest.StartMosquitto(t, mosquitto.Options{})
	c, err := Dial(ctx, mqttclient.Settings{Broker: m.URL, ClientID: "dropped"}, func(_, _ []byte, _ int64) {})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Stop(0); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	case <-ctx.Done():
		t.Fatal("connection still open after the broker stopped")
	}
	if err := c.Err(); err == nil || errors.Is(err, ErrClosed) {
		t.Errorf("Err after the broker stopped = %v, want the read error", err)
	}
	for i := range 2 {
		if err := c.Close(); err != nil {
			t.Errorf("Close #%d of an ended connection: got %v, want nil", i+1, err)
		}
	}
}

// TestSecureBroker: the bench's subscriber reaches a broker that wants
// TLS and a password, with the settings every candec client takes, and
// says so when the password is wrong.
func TestSecureBroker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := brokertest.StartSecure(t, brokertest.Secure{TLS: true, User: "bench", Password: "s3cret"})
	conn := mqttclient.Settings{Broker: b.URL, ClientID: "sub", Username: "bench", Password: "s3cret", CAFile: b.CAFile}
	got := make(chan string, 1)
	sub, err := Dial(ctx, conn, func(topic, payload []byte, _ int64) {
		select {
		case got <- string(topic) + "=" + string(payload):
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if err := sub.Subscribe(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	pubConn := conn
	pubConn.ClientID = "pub"
	cm, err := mqttclient.Connect(ctx, mqttclient.Config{Settings: pubConn})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cm.Disconnect(context.Background()) }()
	if err := cm.AwaitConnection(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := cm.Publish(ctx, &paho.Publish{Topic: "a", Payload: []byte("hi")}); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if m != "a=hi" {
			t.Errorf("got %s, want a=hi", m)
		}
	case <-ctx.Done():
		t.Fatal("no message over TLS")
	}

	conn.Password = "wrong"
	if _, err := Dial(ctx, conn, func(_, _ []byte, _ int64) {}); !errors.Is(err, ErrRefused) {
		t.Errorf("wrong password: got %v, want ErrRefused", err)
	}
}

// TestPublish1 publishes at QoS 1 through a real mosquitto: every
// message reaches a subscriber in order, and every PUBACK comes back,
// past the wrap of the 16-bit packet ID.
func TestPublish1(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m := brokertest.StartMosquitto(t, mosquitto.Options{})
	var (
		mu  sync.Mutex
		got []string
	)
	sub, err := Dial(ctx, mqttclient.Settings{Broker: m.URL, ClientID: "sub"}, func(topic, payload []byte, now int64) {
		mu.Lock()
		got = append(got, string(topic)+"="+string(payload))
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if err := sub.Subscribe(ctx, "car/#"); err != nil {
		t.Fatal(err)
	}
	pub, err := Dial(ctx, mqttclient.Settings{Broker: m.URL, ClientID: "car"}, func(_, _ []byte, _ int64) {})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	const n = 70_000 // past 65,535 packet IDs
	for i := range n {
		if err := pub.Publish1(fmt.Sprintf("car/%d", i%7), fmt.Appendf(nil, "%d", i)); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
		if i%1000 == 999 { // let the acknowledgements catch up
			for w, _ := pub.Unacked(); w > 20_000; w, _ = pub.Unacked() {
				time.Sleep(time.Millisecond)
			}
		}
	}
	for {
		waiting, acked := pub.Unacked()
		mu.Lock()
		k := len(got)
		mu.Unlock()
		if waiting == 0 && acked == n && k == n {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("waiting %d, acked %d, received %d of %d", waiting, acked, k, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, g := range got {
		if want := fmt.Sprintf("car/%d=%d", i%7, i); g != want {
			t.Fatalf("message %d: got %q, want %q", i, g, want)
		}
	}
}

// TestRetain1: a message published with Retain1 through a real
// mosquitto is acknowledged and kept: a subscriber that comes after it
// is sent it; one of Publish1 is not kept.
func TestRetain1(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m := brokertest.StartMosquitto(t, mosquitto.Options{})
	pub, err := Dial(ctx, mqttclient.Settings{Broker: m.URL, ClientID: "pusher"}, func(_, _ []byte, _ int64) {})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	if err := pub.Retain1("fleet/kart01/yukart/policy", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish1("fleet/kart02/yukart/policy", []byte("not kept")); err != nil {
		t.Fatal(err)
	}
	for waiting, _ := pub.Unacked(); waiting > 0; waiting, _ = pub.Unacked() {
		if ctx.Err() != nil {
			t.Fatal("no PUBACK")
		}
		time.Sleep(5 * time.Millisecond)
	}
	got := make(chan string, 4)
	sub, err := Dial(ctx, mqttclient.Settings{Broker: m.URL, ClientID: "car"}, func(topic, payload []byte, _ int64) {
		got <- string(topic) + "=" + string(payload)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if err := sub.Subscribe(ctx, "fleet/+/yukart/policy"); err != nil {
		t.Fatal(err)
	}
	// The end of what the broker holds: a message after the retained ones.
	if err := pub.Publish1("fleet/end/yukart/policy", []byte("end")); err != nil {
		t.Fatal(err)
	}
	var all []string
	for len(all) == 0 || all[len(all)-1] != "fleet/end/yukart/policy=end" {
		select {
		case g := <-got:
			all = append(all, g)
		case <-ctx.Done():
			t.Fatalf("received %q, then nothing", all)
		}
	}
	if want := []string{"fleet/kart01/yukart/policy=v1", "fleet/end/yukart/policy=end"}; !slices.Equal(all, want) {
		t.Fatalf("received %q, want %q", all, want)
	}
}
