package brokertest

import (
	"context"
	"crypto/x509"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/yukart/candec/mqttclient"
)

// connectSecure connects with s and returns the error of the wait for
// the connection; the connection is closed when the test ends.
func connectSecure(t *testing.T, s mqttclient.Settings) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	at := mqttclient.NewAttempts()
	cm, err := mqttclient.Connect(ctx, mqttclient.Config{Settings: s, ConnectTimeout: 3 * time.Second, OnConnectError: at.Record})
	if err != nil {
		cancel()
		return err
	}
	t.Cleanup(func() {
		dctx, dcancel := context.WithTimeout(context.Background(), time.Second)
		_ = cm.Disconnect(dctx)
		dcancel()
		cancel()
		<-cm.Done()
	})
	err = at.Await(ctx, cm, s.Broker, 3*time.Second)
	if err == nil {
		// A refused client certificate shows only on the first read
		// with TLS 1.3: subscribe once to be sure the broker took it.
		sctx, scancel := context.WithTimeout(ctx, 3*time.Second)
		defer scancel()
		_, err = cm.Subscribe(sctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "x"}}})
	}
	return err
}

// TestStartSecureClientCert: a broker that requires a client
// certificate takes the one StartSecure wrote and refuses a client
// without one, or with one the CA did not sign.
func TestStartSecureClientCert(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Secure
	}{
		{"identity as user name", Secure{ClientCert: true, IdentityAsUsername: true, User: "car"}},
		{"and a password", Secure{ClientCert: true, User: "car", Password: "s3cret"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := StartSecure(t, tc.s)
			if !strings.HasPrefix(b.URL, "mqtts://") || b.CertFile == "" || b.KeyFile == "" || b.OtherCAFile == "" {
				t.Fatalf("got %+v, want an mqtts:// URL, a client certificate and key, another CA", b)
			}
			good := mqttclient.Settings{Broker: b.URL, ClientID: "c1", CAFile: b.CAFile, CertFile: b.CertFile, KeyFile: b.KeyFile, Username: "car", Password: tc.s.Password}
			if err := connectSecure(t, good); err != nil {
				t.Fatalf("with the client certificate: %v\n%s", err, b.Log)
			}
			none := good
			none.ClientID, none.CertFile, none.KeyFile = "c2", "", ""
			if err := connectSecure(t, none); !errors.Is(err, mqttclient.ErrNoClientCert) {
				t.Errorf("without a client certificate: got %v, want ErrNoClientCert", err)
			}
			other := good
			other.ClientID, other.CAFile = "c3", b.OtherCAFile
			var unknown x509.UnknownAuthorityError
			if err := connectSecure(t, other); !errors.As(err, &unknown) {
				t.Errorf("trusting another CA: got %v, want the broker's certificate refused", err)
			}
		})
	}
}

// TestStartSecureACL: the ACL file is the broker's: a publish the user
// has no right to never reaches a subscriber.
func TestStartSecureACL(t *testing.T) {
	b := StartSecure(t, Secure{User: "car", Password: "s3cret", ACL: "user car\ntopic readwrite ok/#\ntopic read ro/#\n"})
	var got sync.Map
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	at := mqttclient.NewAttempts()
	s := mqttclient.Settings{Broker: b.URL, ClientID: "acl", Username: "car", Password: "s3cret"}
	cm, err := mqttclient.Connect(ctx, mqttclient.Config{Settings: s, OnConnectError: at.Record,
		OnPublish: func(p *paho.Publish) { got.Store(p.Topic, true) }})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); <-cm.Done() }()
	if err := at.Await(ctx, cm, b.URL, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := cm.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "ok/#"}, {Topic: "ro/#"}}}); err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{"ro/x", "ok/x"} { // ok/x last: once it is back, ro/x would be too
		if _, err := cm.Publish(ctx, &paho.Publish{Topic: topic, QoS: 1, Payload: []byte("v")}); err != nil && topic == "ok/x" {
			t.Fatalf("publish on %s: %v", topic, err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, ok := got.Load("ok/x"); !ok && time.Now().Before(deadline); _, ok = got.Load("ok/x") {
		time.Sleep(10 * time.Millisecond)
	}
	if _, ok := got.Load("ok/x"); !ok {
		t.Fatal("the allowed publish never came back")
	}
	if _, ok := got.Load("ro/x"); ok {
		t.Error("a publish on a read-only topic reached a subscriber, want the ACL to stop it")
	}
}
