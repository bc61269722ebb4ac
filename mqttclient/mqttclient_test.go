package mqttclient

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
	"go.uber.org/goleak"

	"github.com/yukart/candec/internal/testkit/brokertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{"mqtt://broker", "mqtt://broker:1883", ""},
		{"mqtts://broker", "mqtts://broker:8883", ""},
		{"tcp://10.0.0.1:1884", "tcp://10.0.0.1:1884", ""},
		{"mqtt://u:p@broker:1883/", "mqtt://u:p@broker:1883/", ""},
		{"http://broker", "", "scheme must be mqtt:// or mqtts://"},
		{"mqtt://", "", "no host"},
		{"mqtt://broker/topic", "", "unexpected path or query"},
		{"broker:1883", "", "must be mqtt://host:port or mqtts://host:port"},
		{"127.0.0.1:1883", "", "must be mqtt://host:port or mqtts://host:port"},
		{"broker", "", "must be mqtt://host:port or mqtts://host:port"},
	} {
		u, err := ParseURL(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrURL) {
				t.Errorf("ParseURL(%q): got %v, want an ErrURL saying %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || u.String() != tc.want {
			t.Errorf("ParseURL(%q) = %v, %v; want %s", tc.in, u, err, tc.want)
		}
	}
}

func TestTLSErrors(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"missing CA", Config{Settings: Settings{Broker: "mqtts://b", CAFile: filepath.Join(dir, "none.pem")}}, "CA file: open"},
		{"CA not PEM", Config{Settings: Settings{Broker: "mqtts://b", CAFile: notPEM}}, "no PEM certificate in it"},
		{"cert without key", Config{Settings: Settings{Broker: "mqtts://b", CertFile: notPEM}}, "needs both the certificate and the key file"},
		{"TLS files on mqtt://", Config{Settings: Settings{Broker: "mqtt://b", CAFile: notPEM}}, "need an mqtts:// URL"},
	} {
		_, err := tc.cfg.AutopahoConfig()
		if err == nil || !errors.Is(err, ErrTLS) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an ErrTLS saying %q", tc.name, err, tc.want)
		}
	}
}

// TestConnectPublishWill: a connection publishes retained messages with
// their content type, and its will reaches subscribers when the
// connection breaks.
func TestConnectPublishWill(t *testing.T) {
	b := brokertest.Start(t)
	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe("t/#")
	up := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cm, err := Connect(ctx, Config{
		Settings: Settings{Broker: b.URL, ClientID: "mqttclient-test"},
		Will:     &Message{Topic: "t/status", Payload: []byte("gone"), QoS: 1, Retain: true},
		OnUp: func(*autopaho.ConnectionManager, *paho.Connack) {
			select {
			case up <- struct{}{}:
			default:
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer dcancel()
		_ = cm.Disconnect(dctx)
	}()
	<-up
	p := NewPublisher(cm, "t/value", 0, true, "application/json")
	if err := p.Publish(ctx, []byte(`{"value":1}`)); err != nil {
		t.Fatal(err)
	}
	m := sub.WaitFor("t/value", func(m []brokertest.Message) bool { return len(m) > 0 })[0]
	if m.Topic != "t/value" || string(m.Payload) != `{"value":1}` || !m.Retain || m.ContentType != "application/json" {
		t.Fatalf("got %s %q retain=%v %q; want t/value {\"value\":1} retained application/json", m.Topic, m.Payload, m.Retain, m.ContentType)
	}
	cm.TerminateConnectionForTest()
	sub.WaitFor("the will", func(m []brokertest.Message) bool {
		last := m[len(m)-1]
		return last.Topic == "t/status" && string(last.Payload) == "gone" && last.Retain
	})
	<-up // reconnected
}

// TestDialNoDelay reads TCP_NODELAY back from the socket Dial made.
func TestDialNoDelay(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Close()
		}
	}()
	u, _ := ParseURL("mqtt://" + l.Addr().String())
	c, err := Dial(context.Background(), u, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	on, err := noDelay(tcpConn(c))
	if err != nil {
		t.Skip("cannot read TCP_NODELAY here:", err)
	}
	if !on {
		t.Fatal("TCP_NODELAY is off on the broker connection; small messages would wait for Nagle")
	}
}

// unwrap returns the connection under c, if c is one Dial made.
func unwrap(c net.Conn) net.Conn {
	if bc, ok := c.(*conn); ok {
		return bc.Conn
	}
	return c
}
