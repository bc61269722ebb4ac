package service

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/mqttclient"
)

// TestDeployClientIDUnforgeable: with deploy/mosquitto as shipped, a
// broker user who is not the decoder cannot take over the decoder's
// session by connecting with its client id: the broker makes every
// client id its user name (use_username_as_clientid). The decoder stays
// connected (one connection, no takeover), its status never says
// "offline", and it goes on decoding. Before, each such connection
// closed the decoder's and its will set the status offline.
func TestDeployClientIDUnforgeable(t *testing.T) {
	url := deployBroker(t, "candec", "bridge", "dashboard", "grafana")
	watcher, err := connectAs(t, url, "grafana")
	if err != nil {
		t.Fatal(err)
	}
	watcher.subscribe(t, DefaultStatusTopic)
	watcher.subscribe(t, "yukart/vehicle/Speed")

	cfg := testConfig(t, url)
	cfg.ClientID = DefaultClientID // run's default, the decoder's user name
	cfg.Username, cfg.Password = "candec", "candec-secret"
	r := startService(t, cfg, loadTestDB(t))
	watcher.wait(t, DefaultStatusTopic+" "+StatusOnline)
	bridge, err := connectAs(t, url, "bridge")
	if err != nil {
		t.Fatal(err)
	}
	sendRaw := func(b []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := bridge.cm.Publish(ctx, &paho.Publish{Topic: DefaultRawTopic, Payload: b, QoS: 1})
		if err != nil || r.ReasonCode >= 0x80 {
			t.Fatalf("bridge publishing a batch: %v, %+v", err, r)
		}
	}
	waitUntil(t, "the raw subscription", func() bool {
		sendRaw(batch(t, 0, nil))
		time.Sleep(5 * time.Millisecond)
		return counter(t, r.m.rawBatches) > 0
	})

	// Other users connect with the decoder's
	// client id, one after the other, each staying a moment.
	for _, user := range []string{"dashboard", "dashboard", "dashboard"} {
		at := mqttclient.NewAttempts()
		ctx, cancel := context.WithCancel(context.Background())
		cm, err := mqttclient.Connect(ctx, mqttclient.Config{
			Settings:       mqttclient.Settings{Broker: url, ClientID: DefaultClientID, Username: user, Password: user + "-secret"},
			OnConnectError: at.Record,
		})
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		actx, acancel := context.WithTimeout(ctx, 10*time.Second)
		if err := at.Await(actx, cm, url, 10*time.Second); err != nil {
			t.Fatalf("%s connecting with client id %s: %v; want it connected, as %s", user, DefaultClientID, err, user)
		}
		acancel()
		time.Sleep(300 * time.Millisecond) // mosquitto would have closed the decoder's connection at once
		dctx, dcancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = cm.Disconnect(dctx)
		dcancel()
		cancel()
	}

	if got := counter(t, r.m.takeovers); got != 0 {
		t.Errorf("got %v takeovers of the decoder's session, want 0", got)
	}
	if got := counter(t, r.m.connections); got != 1 {
		t.Errorf("the decoder connected %v times, want 1: its connection was closed", got)
	}
	for _, m := range watcher.received() {
		if m == DefaultStatusTopic+" "+StatusOffline {
			t.Errorf("the status went %s while other users connected with the decoder's client id", StatusOffline)
			break
		}
	}
	// The decoder is still there: a batch from the bridge is decoded.
	sendRaw(batch(t, 1, []frame.Frame{motorFrame(time.Now().UnixNano(), 4321, 0)}))
	waitUntil(t, "the batch decoded", func() bool { return counter(t, r.m.rawFrames) >= 1 })
}

// TestDeployWillACL: with deploy/mosquitto as shipped, a user who is not
// the decoder cannot write the decoder's topics through a will either:
// a will on the status topic or a signal topic, left by a connection
// that drops without a DISCONNECT, never reaches a subscriber.
func TestDeployWillACL(t *testing.T) {
	url := deployBroker(t, "candec", "bridge", "dashboard", "grafana")
	watcher, err := connectAs(t, url, "grafana")
	if err != nil {
		t.Fatal(err)
	}
	watcher.subscribe(t, "yukart/#")
	u, err := mqttclient.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ user, topic string }{
		{"dashboard", DefaultStatusTopic},
		{"dashboard", "yukart/vehicle/Speed"},
		{"bridge", DefaultStatusTopic},
		{"bridge", "yukart/vehicle/Speed"},
	} {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		cli := paho.NewClient(paho.ClientConfig{Conn: conn, ClientID: c.user})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ca, err := cli.Connect(ctx, &paho.Connect{
			KeepAlive: 30, CleanStart: true, ClientID: c.user,
			Username: c.user, UsernameFlag: true, Password: []byte(c.user + "-secret"), PasswordFlag: true,
			WillMessage: &paho.WillMessage{Topic: c.topic, Payload: []byte("will of " + c.user), QoS: 1, Retain: true},
		})
		cancel()
		if err == nil && ca.ReasonCode < 0x80 {
			// Accepted: the will must then be refused when it is due.
			// Close the socket under the client: no DISCONNECT.
			conn.Close()
		} else {
			t.Logf("%s with a will on %s: refused at connect (%v)", c.user, c.topic, err)
			conn.Close()
		}
	}
	// The decoder writes its status; once that arrives, every will was
	// long due.
	decoder, err := connectAs(t, url, "candec")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if rc := decoder.publish(t, DefaultStatusTopic, StatusOnline); rc >= 0x80 {
		t.Fatalf("the decoder publishing its status: reason 0x%02x", rc)
	}
	watcher.wait(t, DefaultStatusTopic+" "+StatusOnline)
	for _, m := range watcher.received() {
		if strings.Contains(m, "will of") {
			t.Errorf("a will reached the decoder's topics: %q", m)
		}
	}
}
