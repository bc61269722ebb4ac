package rollout

import (
	"context"
	"crypto/ed25519"
	"errors"
	"testing"
	"time"

	"github.com/yukart/candec/campaign"
	"github.com/yukart/candec/internal/lab/mosquitto"
	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/mqttclient"
)

// TestParseProtocol: "5" and "3.1.1" and nothing else, each the name
// String gives back.
func TestParseProtocol(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Protocol
		ok   bool
	}{
		{"5", MQTT5, true}, {"3.1.1", MQTT311, true},
		{"", 0, false}, {"3", 0, false}, {"4", 0, false}, {"5.0", 0, false}, {"mqttv311", 0, false}, {" 5", 0, false},
	} {
		got, err := ParseProtocol(tc.in)
		if tc.ok != (err == nil) || got != tc.want || !tc.ok && !errors.Is(err, ErrProtocol) {
			t.Errorf("ParseProtocol(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
		if tc.ok && got.String() != tc.in {
			t.Errorf("%q read back as %q", tc.in, got.String())
		}
	}
}

// TestPushReadBothProtocols: through a real mosquitto, a campaign pushed
// over one protocol is read back over the other (the pushed version,
// per car), and a push's cars are those the broker knows (read behind
// the fence) with the campaign's glob applied, whichever the protocol.
func TestPushReadBothProtocols(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := brokertest.StartMosquitto(t, mosquitto.Options{})
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct{ push, read Protocol }{{MQTT311, MQTT5}, {MQTT5, MQTT311}, {MQTT311, MQTT311}} {
		version := uint64(i + 1)
		payload, err := campaign.Sign(priv, campaign.Body{Version: version, Vehicles: "kart0[12]", DBC: "sha256:00",
			NotBefore: time.Now(), Policy: "defaults:\n  max_rate: 1\n"})
		if err != nil {
			t.Fatal(err)
		}
		cfg := func(p Protocol) Config {
			return Config{Settings: mqttclient.Settings{Broker: m.URL, ClientID: "campaigns"}, Protocol: p}
		}
		// kart01 is named on the first push only, then known from the
		// broker; kart03 is named but not in the glob.
		named := []string{"kart03"}
		if i == 0 {
			named = append(named, "kart01")
		}
		pushed, err := Push(ctx, cfg(tc.push), payload, named)
		if err != nil || len(pushed) != 1 || pushed[0] != (Pushed{"kart01", "fleet/kart01/yukart/policy"}) {
			t.Fatalf("push over %v: %v, %v; want kart01 only", tc.push, pushed, err)
		}
		cars, err := Read(ctx, cfg(tc.read), "")
		if err != nil {
			t.Fatalf("read over %v: %v", tc.read, err)
		}
		if len(cars) != 1 || cars[0].Vehicle != "kart01" || cars[0].Pushed == nil || cars[0].Pushed.Version != version {
			t.Fatalf("pushed over %v, read over %v: %+v, want kart01 pushed version %d", tc.push, tc.read, cars, version)
		}
	}
}
