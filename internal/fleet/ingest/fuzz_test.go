package ingest

import (
	"errors"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/eclipse/paho.golang/paho/session/state"

	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/mqttclient"
)

// FuzzWindowDelivery drives the window path end to end as the broker's
// deliveries reach it (Ingest.receive, then the commit into a lake of
// real lake.Writers): any payload, topic, retain flag and properties
// (content type, payload format, user property, subscription
// identifier), on an instance that has seen its own subscription or
// not. It asserts no panic and no failed commit; that every delivery is
// counted once, as a window, a duplicate or under its reason; that a
// retained one is skipped (reason retained); that every item of a window
// taken is accounted once (a value written, a stale mark, or reason
// signal, value or time); and that a subscription identifier not seen
// before, after the instance's own, stops it (ErrTakenOver) without
// taking the message.
func FuzzWindowDelivery(f *testing.F) {
	for _, enc := range []envelope.Encoding{envelope.JSON, envelope.Msgpack} {
		wins := carWindows(f, enc)
		f.Add(wins[0], kartTopic, false, "", byte(0), "", 0, false)
		f.Add(wins[100], kartTopic, true, "application/json", byte(1), "k", 7, true)
	}
	f.Add([]byte(`{"seq":1,"epoch":7,"start":0,"end":1,"items":[["yukart/vehicle/MOT_Speed",{"value":18446744073709551615,"ts":-9223372036854775808,"seq":1,"epoch":7}],`+
		`["yukart/vehicle/MOT_Torque",{"value":null,"nonfinite":"NaN","ts":5,"seq":1,"epoch":7}],["yukart/vehicle/MOT_Speed",{"value":3.7,"ts":5,"seq":2,"epoch":7}]]}`),
		"fleet/../yukart/window", false, "", byte(0), "", 0, false)
	f.Add([]byte{}, "", false, "\xff", byte(9), "\x00", 1, true)
	f.Add([]byte("not a window"), "fleet/kart01/yukart/window/extra", false, "", byte(0), "", 0, false)

	cfg := testConfig(f, "fuzz")
	cfg.Dir, cfg.Now = "", time.Now
	f.Fuzz(func(t *testing.T, payload []byte, topic string, retain bool, ctype string, format byte, key string, subID int, ownSeen bool) {
		cfg.Store = &nullStore{files: map[string][]byte{}}
		l, err := openLake(cfg)
		if err != nil {
			t.Fatal(err)
		}
		in := newTestIngest(t, cfg, l)
		defer in.Close()
		if ownSeen {
			in.subs.foreign(&in.subs.own)
		}
		p := &paho.Publish{Topic: topic, Payload: payload, Retain: retain, QoS: 1, PacketID: 1,
			Properties: &paho.PublishProperties{ContentType: ctype, PayloadFormat: &format}}
		if key != "" {
			p.Properties.User = append(p.Properties.User, paho.UserProperty{Key: key, Value: key})
		}
		if subID != 0 {
			p.Properties.SubscriptionIdentifier = &subID
		}
		sess := &ackSession{SessionManager: state.NewInMemory(), batcher: &mqttclient.Batcher{}}
		in.receive(sess, p)

		if ownSeen && subID != 0 && subID != in.subs.own {
			select {
			case <-in.core.failed:
			case <-time.After(10 * time.Second):
				t.Fatal("a foreign subscription identifier did not stop the instance")
			}
			if c := in.Counters(); !errors.Is(in.core.err, ErrTakenOver) || c.Messages != 0 || c.Takeovers != 1 {
				t.Fatalf("taken over: %v, %d messages, %d takeovers; want ErrTakenOver, none taken, 1", in.core.err, c.Messages, c.Takeovers)
			}
			return
		}
		if err := in.core.close(); err != nil {
			t.Fatalf("commit: %v", err)
		}
		c := in.Counters()
		var malformed uint64
		for _, n := range c.Malformed {
			malformed += n
		}
		if c.Messages != 1 || c.Acked != 0 && c.Acked != 1 {
			t.Fatalf("messages %d, acked %d: want one delivery", c.Messages, c.Acked)
		}
		if retain && (c.Malformed[ReasonRetained] != 1 || c.Windows != 0) {
			t.Fatalf("retained: %+v", c)
		}
		whole := c.Malformed[ReasonRetained] + c.Malformed[ReasonSize] + c.Malformed[ReasonWindow] + c.Malformed[ReasonVehicle]
		if whole+c.Windows+c.Duplicates != 1 {
			t.Fatalf("the delivery is counted %d times: %+v", whole+c.Windows+c.Duplicates, c)
		}
		if c.Windows == 1 {
			var w envelope.Window
			if err := envelope.ParseWindow(payload, &w); err != nil {
				t.Fatalf("taken, yet no window: %v", err)
			}
			items := c.Malformed[ReasonSignal] + c.Malformed[ReasonValue] + c.Malformed[ReasonTime] + c.Stale + c.Values
			if items != uint64(len(w.Items)) || c.Envelopes != uint64(len(w.Items)) {
				t.Fatalf("%d items accounted for (%d envelopes), the window has %d: %+v", items, c.Envelopes, len(w.Items), c)
			}
			if c.Rows > c.Values || c.Values > 0 && c.Files == 0 {
				t.Fatalf("%d rows of %d values in %d files", c.Rows, c.Values, c.Files)
			}
		}
	})
}
