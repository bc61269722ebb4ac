package watch

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/mqttclient"
)

// fakeBroker answers a Subscriber's SUBSCRIBEs as a test says: each
// call takes the next answer from replies, or waits until ctx ends when
// hold is set.
type fakeBroker struct {
	calls chan *paho.Subscribe
	reply chan reply
}

type reply struct {
	sa  *paho.Suback
	err error
}

func newFakeBroker() *fakeBroker {
	return &fakeBroker{calls: make(chan *paho.Subscribe, 10), reply: make(chan reply, 10)}
}

func (f *fakeBroker) subscribe(ctx context.Context, s *paho.Subscribe) (*paho.Suback, error) {
	f.calls <- s
	select {
	case r := <-f.reply:
		return r.sa, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *fakeBroker) call(t *testing.T) *paho.Subscribe {
	t.Helper()
	select {
	case s := <-f.calls:
		return s
	case <-time.After(5 * time.Second):
		t.Fatal("no SUBSCRIBE")
		return nil
	}
}

// answered waits until the Subscriber has read the SUBACK of its
// connection.
func answered(t *testing.T, s *Subscriber) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		s.mu.Lock()
		pending := s.pending
		s.mu.Unlock()
		if !pending {
			return
		}
	}
	t.Fatal("the SUBACK was not read")
}

func noFatal(t *testing.T, s *Subscriber) {
	t.Helper()
	select {
	case err := <-s.Fatal():
		t.Fatalf("got %v, want no fatal error", err)
	case <-time.After(50 * time.Millisecond):
	}
}

func fatal(t *testing.T, s *Subscriber) error {
	t.Helper()
	select {
	case err := <-s.Fatal():
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("no fatal error")
		return nil
	}
}

// TestSubscriberEveryConnection: each connection subscribes to every
// filter again, and granted subscriptions end nothing.
func TestSubscriberEveryConnection(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fb := newFakeBroker()
	filters := []string{"yukart/vehicle/+", "yukart/decoder/status"}
	s := NewSubscriber(ctx, filters)
	for conn := 1; conn <= 3; conn++ {
		fb.reply <- reply{sa: &paho.Suback{Reasons: []byte{0, 0}}}
		s.Up(fb.subscribe)
		sub := fb.call(t)
		var got []string
		for _, o := range sub.Subscriptions {
			got = append(got, o.Topic)
		}
		if strings.Join(got, " ") != strings.Join(filters, " ") {
			t.Errorf("connection %d subscribed to %v, want %v", conn, got, filters)
		}
		answered(t, s)
		noFatal(t, s)
		s.Down()
	}
	noFatal(t, s)
}

func TestSubscriberRefused(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fb := newFakeBroker()
	s := NewSubscriber(ctx, []string{"a/b", "c/+"})
	fb.reply <- reply{sa: &paho.Suback{Reasons: []byte{0, 0x87}}, err: errors.New("refused")}
	s.Up(fb.subscribe)
	err := fatal(t, s)
	if want := `watch: the broker refused the subscription to "c/+": reason code 0x87`; err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestSubscriberDrops: connections that drop before the SUBACK end the
// watch after MaxSubscribeDrops in a row; a granted subscription starts
// the count again.
func TestSubscriberDrops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := NewSubscriber(ctx, []string{"a/b"})
	// One broker a connection: an older connection's SUBSCRIBE still
	// waits for its answer.
	drop := func() {
		fb := newFakeBroker()
		s.Up(fb.subscribe)
		fb.call(t)
		s.Down()
	}
	for range MaxSubscribeDrops - 1 {
		drop()
	}
	noFatal(t, s)
	fb := newFakeBroker()
	fb.reply <- reply{sa: &paho.Suback{Reasons: []byte{0}}}
	s.Up(fb.subscribe)
	fb.call(t)
	answered(t, s)
	s.Down() // after the SUBACK: not a drop
	for range MaxSubscribeDrops - 1 {
		drop()
	}
	noFatal(t, s)
	drop()
	if err := fatal(t, s); !strings.Contains(err.Error(), "closed the connection 3 times in a row") {
		t.Errorf("got %v, want it to say the broker closed the connection 3 times", err)
	}
}

// TestSubscriberLateAnswer: the answer to an older connection's
// SUBSCRIBE, arriving after a new connection came up, is not the new
// connection's.
func TestSubscriberLateAnswer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	old, cur := newFakeBroker(), newFakeBroker()
	s := NewSubscriber(ctx, []string{"a/b"})
	s.Up(old.subscribe)
	old.call(t)
	s.Down()
	cur.reply <- reply{sa: &paho.Suback{Reasons: []byte{0}}}
	s.Up(cur.subscribe)
	cur.call(t)
	old.reply <- reply{sa: &paho.Suback{Reasons: []byte{0x80}}, err: errors.New("refused")}
	noFatal(t, s)
}

// TestSubscriberGivesUp: a broker that drops the connection on every
// SUBSCRIBE (mosquitto does for a malformed filter) ends the watch after
// a few tries, not thousands of reconnections a second.
func TestSubscriberGivesUp(t *testing.T) {
	b := brokertest.Start(t)
	if b.Embedded {
		t.Skip("needs mosquitto, which drops a client for a malformed filter")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Built by hand: watch itself never sends such a filter.
	s := NewSubscriber(ctx, []string{"a/#/b"})
	cm, err := mqttclient.Connect(ctx, mqttclient.Config{
		Settings: mqttclient.Settings{Broker: b.URL, ClientID: "subscriber-test"},
		OnUp:     func(cm *autopaho.ConnectionManager, _ *paho.Connack) { s.Up(cm.Subscribe) },
		OnDown:   s.Down,
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.Fatal():
		if !strings.Contains(err.Error(), "closed the connection 3 times in a row") {
			t.Errorf("got %v, want it to say the broker closed the connection 3 times", err)
		}
	case <-ctx.Done():
		t.Fatal("no fatal error: the subscriber goes on reconnecting")
	}
	dctx, dcancel := context.WithTimeout(context.Background(), time.Second)
	_ = cm.Disconnect(dctx)
	dcancel()
	<-cm.Done()
	data, _ := os.ReadFile(b.LogFile())
	// One more connection may have begun before the watch stopped its
	// client; before, there were thousands a second.
	if n := strings.Count(string(data), "New client connected"); n < MaxSubscribeDrops || n > MaxSubscribeDrops+1 {
		t.Errorf("mosquitto saw %d connections, want %d or %d", n, MaxSubscribeDrops, MaxSubscribeDrops+1)
	}
}

func TestRefusal(t *testing.T) {
	err := Refusal([]string{"a/b", "c/+"}, &paho.Suback{Reasons: []byte{0, 0x87}})
	if want := `watch: the broker refused the subscription to "c/+": reason code 0x87`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
