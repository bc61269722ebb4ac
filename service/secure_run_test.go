package service

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/mqttclient"
)

// TestRunOverTLS: the service decodes through a broker that requires
// TLS, a client certificate and a password, the password taken from
// CANDEC_PASSWORD as on the car.
func TestRunOverTLS(t *testing.T) {
	b := brokertest.StartSecure(t, brokertest.Secure{ClientCert: true, User: "candec", Password: "s3cret"})
	conn := mqttclient.Settings{Broker: b.URL, Username: "candec", CAFile: b.CAFile, CertFile: b.CertFile, KeyFile: b.KeyFile}

	// The connection keys as the car's config file gives them, the
	// password from the environment.
	file := filepath.Join(t.TempDir(), "candec.yaml")
	yaml := fmt.Sprintf("broker: %s\nusername: candec\nca_file: %s\ncert_file: %s\nkey_file: %s\ndbc: [%s]\n",
		b.URL, b.CAFile, b.CertFile, b.KeyFile, filepath.Join("..", "testdata", "yukart.dbc"))
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadConfig(file, EnvOverrides([]string{"CANDEC_PASSWORD=s3cret"}))
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Password != "s3cret" || loaded.CertFile != b.CertFile {
		t.Fatalf("config: password %q, cert_file %q; want CANDEC_PASSWORD's and the file's", loaded.Password, loaded.CertFile)
	}
	cfg := testConfig(t, b.URL)
	cfg.Settings = loaded.Settings
	cfg.ClientID = "candec-tls"

	var (
		mu  sync.Mutex
		got []string
	)
	connect := func(id string, onPublish func(*paho.Publish)) *mqttclient.Config {
		c := &mqttclient.Config{Settings: conn, OnPublish: onPublish}
		c.ClientID, c.Password = id, "s3cret"
		return c
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub, err := mqttclient.Connect(ctx, *connect("reader", func(p *paho.Publish) {
		mu.Lock()
		got = append(got, p.Topic)
		mu.Unlock()
	}))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := mqttclient.Connect(ctx, *connect("bridge", nil))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		dctx, dcancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer dcancel()
		_ = sub.Disconnect(dctx)
		_ = pub.Disconnect(dctx)
	}()
	actx, acancel := context.WithTimeout(ctx, 10*time.Second)
	defer acancel()
	if err := sub.AwaitConnection(actx); err != nil {
		t.Fatal(err)
	}
	if err := pub.AwaitConnection(actx); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.Subscribe(actx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "yukart/#"}}}); err != nil {
		t.Fatal(err)
	}

	r := startService(t, cfg, loadTestDB(t))
	raw := mqttclient.NewPublisher(pub, DefaultRawTopic, 0, false, "")
	now := time.Now().UnixNano()
	waitUntil(t, "an envelope decoded over TLS", func() bool {
		_ = raw.Publish(ctx, batch(t, 1, nil))
		_ = raw.Publish(ctx, batch(t, 2, []frame.Frame{motorFrame(now, 1200, 5)}))
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		for _, topic := range got {
			if strings.HasPrefix(topic, "yukart/vehicle/") {
				return true
			}
		}
		return false
	})
	if n := counter(t, r.m.rawBatches); n == 0 {
		t.Errorf("the service received no raw batch")
	}
}
