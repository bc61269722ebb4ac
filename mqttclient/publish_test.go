package mqttclient

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/packets"

	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/mqttclient/wire"
)

// readPublish decodes b with paho's packet reader, which must find one
// PUBLISH and nothing after it.
func readPublish(t testing.TB, b []byte) *packets.Publish {
	t.Helper()
	r := bytes.NewReader(b)
	cp, err := packets.ReadPacket(r)
	if err != nil {
		t.Fatalf("paho cannot read the packet % x: %v", b[:min(len(b), 32)], err)
	}
	p, ok := cp.Content.(*packets.Publish)
	if !ok {
		t.Fatalf("got a packet of type %d, want PUBLISH", cp.Type)
	}
	if r.Len() != 0 {
		t.Fatalf("%d bytes left after the packet", r.Len())
	}
	return p
}

// checkRead compares a PUBLISH paho read with what was encoded.
func checkRead(t testing.TB, p *packets.Publish, topic string, payload []byte, retain bool, ct string) {
	t.Helper()
	gotCT := ""
	if p.Properties != nil {
		gotCT = p.Properties.ContentType
	}
	if p.Topic != topic || !bytes.Equal(p.Payload, payload) || p.Retain != retain || p.QoS != 0 || p.Duplicate || gotCT != ct {
		t.Fatalf("got %q (%d bytes) retain=%v QoS %d dup=%v %q; want %q (%d bytes) retain=%v QoS 0 %q",
			p.Topic, len(p.Payload), p.Retain, p.QoS, p.Duplicate, gotCT, topic, len(payload), retain, ct)
	}
}

// TestAppendPublish: paho reads back what wire.AppendPublishV5 wrote, at the
// lengths where the variable byte integer grows.
func TestAppendPublish(t *testing.T) {
	for _, tc := range []struct {
		topic   string
		payload int
		retain  bool
		ct      string
	}{
		{"a", 0, false, ""},
		{"yukart/vehicle/Speed", 60, true, "application/json"},
		{"t", 121, false, ""}, // remaining length 124
		{"t", 125, true, ""},  // 128: two bytes
		{"t", 16380, false, "application/msgpack"},
		{"t", 2 << 20, true, "text/plain"}, // three bytes
		{strings.Repeat("x", 0xFFFF), 10, false, strings.Repeat("c", 0xFFFF)},
	} {
		payload := bytes.Repeat([]byte{'p'}, tc.payload)
		if err := checkPublish(tc.topic, payload, tc.ct); err != nil {
			t.Fatal(err)
		}
		b := wire.AppendPublishV5([]byte("kept"), tc.topic, payload, tc.retain, tc.ct)
		if string(b[:4]) != "kept" {
			t.Fatalf("AppendPublishV5 changed what was in the buffer: %q", b[:4])
		}
		checkRead(t, readPublish(t, b[4:]), tc.topic, payload, tc.retain, tc.ct)
	}
}

// TestCheckPublish: a message MQTT cannot carry is refused with an
// error naming why.
func TestCheckPublish(t *testing.T) {
	for _, tc := range []struct {
		topic, ct string
		payload   int
		want      string
	}{
		{"", "", 1, "topic of 0 bytes"},
		{strings.Repeat("x", 0x10000), "", 1, "topic of 65536 bytes"},
		{"t", strings.Repeat("c", 0x10000), 1, "content type of 65536 bytes"},
		{"t", "", wire.MaxRemaining, "over MQTT's largest packet"},
	} {
		err := checkPublish(tc.topic, make([]byte, tc.payload), tc.ct)
		if !errors.Is(err, ErrPublishArgs) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("topic %d bytes, content type %d, payload %d: got %v, want ErrPublishArgs saying %q",
				len(tc.topic), len(tc.ct), tc.payload, err, tc.want)
		}
	}
}

// FuzzAppendPublish: whatever passes checkPublish, paho reads back as
// it was written.
func FuzzAppendPublish(f *testing.F) {
	f.Add("yukart/vehicle/Speed", []byte(`{"value":1}`), true, "application/json")
	f.Add("t", []byte{}, false, "")
	f.Fuzz(func(t *testing.T, topic string, payload []byte, retain bool, ct string) {
		if checkPublish(topic, payload, ct) != nil {
			return
		}
		checkRead(t, readPublish(t, wire.AppendPublishV5(nil, topic, payload, retain, ct)), topic, payload, retain, ct)
	})
}

// TestBatcherPublish: Batcher.Publish reaches subscribers with its
// retain flag and content type, in order with what paho publishes on
// the same connection; without a connection it returns
// ConnectionDownError.
func TestBatcherPublish(t *testing.T) {
	var none Batcher
	if err := none.Publish("t/x", nil, false, ""); !errors.Is(err, autopaho.ConnectionDownError) {
		t.Fatalf("Publish before a connection: got %v, want ConnectionDownError", err)
	}
	br := brokertest.Start(t)
	sub := brokertest.Connect(t, br.URL)
	sub.Subscribe("t/#")
	cm, b := connectBatched(t, br.URL)
	viaPaho := NewPublisher(cm, "t/paho", 0, false, "")
	b.Hold()
	for i := range 10 {
		var err error
		if i%3 == 2 {
			err = viaPaho.Publish(context.Background(), []byte(strconv.Itoa(i)))
		} else {
			err = b.Publish("t/direct", []byte(strconv.Itoa(i)), i%2 == 0, "application/json")
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	got := sub.WaitFor("10 messages", func(m []brokertest.Message) bool { return len(m) >= 10 })
	for i, m := range got {
		topic, ct, retain := "t/direct", "application/json", i%2 == 0
		if i%3 == 2 {
			topic, ct, retain = "t/paho", "", false
		}
		if m.Topic != topic || string(m.Payload) != strconv.Itoa(i) || m.ContentType != ct || m.Retain != retain {
			t.Fatalf("message %d: got %s %q %q retain=%v, want %s %q %q retain=%v", i, m.Topic, m.Payload, m.ContentType, m.Retain,
				topic, strconv.Itoa(i), ct, retain)
		}
	}
}

// TestBatcherPublishAllocs: once the buffer has grown, a held Publish
// and the Flush that writes it allocate nothing.
func TestBatcherPublishAllocs(t *testing.T) {
	c := newConn(&fakeConn{discard: true})
	var b Batcher
	b.dialed(c)
	b.up(nil)
	payload := bytes.Repeat([]byte{'x'}, 120)
	round := func() {
		b.Hold()
		for range 20 {
			if err := b.Publish("yukart/vehicle/Speed", payload, true, "application/json"); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	round()
	if a := testing.AllocsPerRun(100, round); a != 0 {
		t.Fatalf("got %v allocations per round of 20, want 0", a)
	}
}

// TestBatcherFollowsReconnect: across a broker restart Batcher.Publish
// fails with ConnectionDownError or the write's error, never writes to
// the new connection before the broker accepted it (mosquitto would
// close it for a PUBLISH before CONNECT), and then publishes on it.
func TestBatcherFollowsReconnect(t *testing.T) {
	br := brokertest.Start(t)
	_, b := connectBatched(t, br.URL)
	if err := b.Publish("t/before", []byte("1"), false, ""); err != nil {
		t.Fatal(err)
	}
	br.Restart()
	sub := brokertest.Connect(t, br.URL)
	sub.Subscribe("t/#")
	deadline := time.Now().Add(15 * time.Second)
	for sub.Len() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("nothing published through the Batcher within 15 s of the restart")
		}
		err := b.Publish("t/after", []byte("2"), false, "")
		var ne net.Error
		if err != nil && !errors.Is(err, autopaho.ConnectionDownError) && !errors.As(err, &ne) && !errors.Is(err, syscall.EPIPE) &&
			!errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("Publish during the reconnect: got %v, want ConnectionDownError or a network error", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	m := sub.Messages()[0]
	if m.Topic != "t/after" || string(m.Payload) != "2" {
		t.Fatalf("got %s %q, want t/after \"2\"", m.Topic, m.Payload)
	}
	// The connection the message went out on is the one the broker
	// accepted: a PUBLISH before CONNECT would have made mosquitto drop
	// it, and this one would not arrive.
	if err := b.Publish("t/after", []byte("3"), false, ""); err != nil {
		t.Fatal(err)
	}
	sub.WaitFor("the second message", func(m []brokertest.Message) bool { return len(m) >= 2 })
}
