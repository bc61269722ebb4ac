package ingest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/internal/lab/mosquitto"
	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/mqttclient"
)

// hostileWindows is how many windows the honest car publishes in each
// row of TestFleetHostileBroker.
const hostileWindows = 20

// TestFleetHostileBroker: the fleet's cloud broker as deploy/mosquitto
// ships it (fleet.conf with its plugin and message size limit,
// fleet.acl, TLS with client certificates of a CA made for the test)
// against a hostile car, one attack a row. In every row an ingest runs
// in a group (--group lake), the attack is made, then kart01 publishes
// 20 windows; what a user would notice is asserted: the attacker's
// refusal, and the ingest's summary and lake: 20 windows of kart01,
// no gap, no other vehicle, every value once.
func TestFleetHostileBroker(t *testing.T) {
	wins := carWindows(t, envelope.JSON)[:hostileWindows]
	rows := []struct {
		name string
		// attack runs before kart01 publishes. It may replace the
		// windows kart01 publishes (same seqs, same values).
		attack func(t *testing.T, f *fleet, wins [][]byte) [][]byte
	}{
		// A car joins the ingest's shared group, and would take every
		// other window of the fleet (fleet.acl alone lets it).
		{"car subscribes to the ingest's group", subscribeRefused("$share/lake/fleet/+/yukart/window")},
		{"car subscribes to every car's windows", subscribeRefused("fleet/#")},
		{"car subscribes to a group of its own", subscribeRefused("$share/x/#")},
		{"car subscribes to everything", subscribeRefused("#")},
		// A car asks for the ingest's client id (its certificate's name,
		// or the id the ingest asks for) to take its session: the
		// broker gives the car its own name.
		{"car takes the ingest's client id", clientIDKept("ingest")},
		{"car takes the ingest's requested client id", clientIDKept(ClientIDPrefix + "a")},
		// A certificate whose name is no single topic level writes into
		// another car's stream (fleet.acl alone lets kart02/yukart).
		{"certificate kart02/yukart writes kart02's stream", badNameRefused("kart02/yukart")},
		{"certificate + writes kart02's stream", badNameRefused("+")},
		{"certificate # writes kart02's stream", badNameRefused("#")},
		{"certificate without a name connects", noNameRefused},
		// A message larger than a window can be.
		{"car sends a message over the size limit", oversizeRefused},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			f := startFleet(t)
			dir := t.TempDir()
			cfg := brokerConfig(t, f, "a", dir)
			cfg.Group = "lake"
			r := startIngest(t, cfg)
			sent := row.attack(t, f, wins)
			f.car(t, "kart01").publish(t, sent)
			r.waitFor(t, "kart01's 20 windows", func(c Counters) bool { return c.Windows >= hostileWindows })
			r.stop()
			if r.err != nil {
				t.Fatal(r.err)
			}
			c := r.in.Counters()
			if c.Windows != hostileWindows || c.Messages != hostileWindows || c.WindowGaps != 0 || c.Duplicates != 0 || len(c.Malformed) != 0 {
				t.Errorf("the ingest's summary: %d messages, %d windows, %d gaps, %d duplicates, malformed %v; want %d windows of kart01, no gap, nothing else",
					c.Messages, c.Windows, c.WindowGaps, c.Duplicates, c.Malformed, hostileWindows)
			}
			if len(c.Vehicles) != 1 || c.Vehicles["kart01"].Windows != hostileWindows {
				t.Errorf("vehicles %v: want kart01 alone", c.Vehicles)
			}
			sameCells(t, lakeCells(t, dir), published(t, "kart01", wins))
		})
	}
}

// attacker connects with the certificate cn (and asks for clientID)
// and counts the messages it is sent. It stays connected until the
// test ends.
func (f *fleet) attacker(t *testing.T, cn, clientID string) (*autopaho.ConnectionManager, *atomic.Int64) {
	t.Helper()
	// The files are named apart from cn, which may hold '/' (one
	// attacker a row).
	cert, key := f.ca.Client(t, "attacker", cn)
	s := mqttclient.Settings{Broker: f.b.URL, CAFile: f.ca.File, CertFile: cert, KeyFile: key, ClientID: clientID}
	var got atomic.Int64
	at := mqttclient.NewAttempts()
	cm, err := mqttclient.Connect(context.Background(), mqttclient.Config{Settings: s, OnConnectError: at.Record,
		OnPublish: func(*paho.Publish) { got.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { disconnect(cm) })
	if err := at.Await(context.Background(), cm, s.Broker, 30*time.Second); err != nil {
		t.Fatalf("the car %q: %v", cn, err)
	}
	return cm, &got
}

// subscribeRefused: kart02 subscribes to filter at QoS 1 and is
// refused (SUBACK 0x87, not authorized); it stays connected while
// kart01 publishes, and is sent nothing.
func subscribeRefused(filter string) func(*testing.T, *fleet, [][]byte) [][]byte {
	return func(t *testing.T, f *fleet, wins [][]byte) [][]byte {
		cm, got := f.attacker(t, "kart02", "kart02")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		sa, err := cm.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: filter, QoS: 1}}})
		switch {
		case sa == nil:
			t.Fatalf("subscribing to %s: no SUBACK: %v", filter, err)
		case len(sa.Reasons) != 1 || sa.Reasons[0] != 0x87:
			t.Errorf("the car's subscription to %s: reason codes %#v, want 0x87 (not authorized)", filter, sa.Reasons)
		}
		t.Cleanup(func() {
			if n := got.Load(); n != 0 {
				t.Errorf("the car was sent %d messages", n)
			}
		})
		return wins
	}
}

// clientIDKept: kart02 connects asking for the client id id, and
// subscribes (refused) as a taken session would: the broker names it
// kart02, and the ingest's connection is never closed.
func clientIDKept(id string) func(*testing.T, *fleet, [][]byte) [][]byte {
	return func(t *testing.T, f *fleet, wins [][]byte) [][]byte {
		cm, got := f.attacker(t, "kart02", id)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if sa, _ := cm.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "fleet/#", QoS: 1}}}); sa == nil || sa.Reasons[0] < 0x80 {
			t.Errorf("the car's subscription was granted: %+v", sa)
		}
		t.Cleanup(func() {
			b, err := os.ReadFile(f.b.Log)
			if err != nil {
				t.Fatal(err)
			}
			log := string(b)
			if !strings.Contains(log, "as kart02 (") {
				t.Errorf("the broker did not name the car kart02:\n%s", log)
			}
			if strings.Contains(log, "already connected") {
				t.Errorf("a session was taken over:\n%s", log)
			}
			if n := got.Load(); n != 0 {
				t.Errorf("the car was sent %d messages", n)
			}
		})
		return wins
	}
}

// badNameRefused: a car whose certificate's name is cn publishes its
// windows on kart02's stream (fleet.acl alone lets "kart02/yukart"
// write fleet/kart02/yukart/window): every publish is refused (PUBACK
// 0x87), and it may subscribe to nothing either.
func badNameRefused(cn string) func(*testing.T, *fleet, [][]byte) [][]byte {
	return func(t *testing.T, f *fleet, wins [][]byte) [][]byte {
		cm, got := f.attacker(t, cn, "")
		for i, w := range wins[:5] {
			pr, err := cm.Publish(context.Background(), &paho.Publish{Topic: "fleet/kart02/yukart/window", QoS: 1, Payload: w})
			if pr == nil || pr.ReasonCode != 0x87 {
				t.Errorf("window %d of %q on kart02's stream: %+v, %v; want PUBACK 0x87 (not authorized)", i, cn, pr, err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if sa, _ := cm.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "fleet/kart02/#", QoS: 1}}}); sa == nil || sa.Reasons[0] != 0x87 {
			t.Errorf("the subscription of %q: %+v, want 0x87", cn, sa)
		}
		t.Cleanup(func() {
			if n := got.Load(); n != 0 {
				t.Errorf("the car was sent %d messages", n)
			}
		})
		return wins
	}
}

// noNameRefused: a certificate of the fleet's CA without a common name
// cannot connect.
func noNameRefused(t *testing.T, f *fleet, wins [][]byte) [][]byte {
	cert, key := f.ca.Client(t, "noname", "")
	s := mqttclient.Settings{Broker: f.b.URL, CAFile: f.ca.File, CertFile: cert, KeyFile: key}
	at := mqttclient.NewAttempts()
	cm, err := mqttclient.Connect(context.Background(), mqttclient.Config{Settings: s, OnConnectError: at.Record})
	if err != nil {
		t.Fatal(err)
	}
	defer disconnect(cm)
	if err := at.Await(context.Background(), cm, s.Broker, 30*time.Second); err == nil || !strings.Contains(err.Error(), "0x86") {
		t.Errorf("a certificate without a name: %v, want a refusal (0x86, bad user name or password)", err)
	}
	return wins
}

// oversizeRefused: a message one byte over fleet.conf's
// message_size_limit is refused, from an MQTT v5 client (PUBACK 0x95,
// packet too large) and from a 3.1.1 client as the car's bridge is
// (acknowledged and dropped: the bridge goes on with the next window);
// the ingest is sent neither. kart01's first window, padded to the
// limit, is taken whole.
func oversizeRefused(t *testing.T, f *fleet, wins [][]byte) [][]byte {
	limit := shippedMessageLimit(t)
	over := padWindow(t, wins[0], limit+1)
	cm, _ := f.attacker(t, "kart02", "kart02")
	pr, err := cm.Publish(context.Background(), &paho.Publish{Topic: "fleet/kart02/yukart/window", QoS: 1, Payload: over})
	if pr == nil || pr.ReasonCode != 0x95 {
		t.Errorf("a message of %d bytes: %+v, %v; want PUBACK 0x95 (packet too large)", len(over), pr, err)
	}
	pub31(t, f, "kart03", "fleet/kart03/yukart/window", over)
	out := append([][]byte{padWindow(t, wins[0], limit)}, wins[1:]...)
	return out
}

// shippedMessageLimit is fleet.conf's message_size_limit.
func shippedMessageLimit(t testing.TB) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "mosquitto", "fleet.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "message_size_limit "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n <= 0 {
				t.Fatalf("fleet.conf: message_size_limit %q", v)
			}
			return n
		}
	}
	t.Fatal("fleet.conf sets no message_size_limit")
	return 0
}

// padWindow returns the JSON window w with spaces after it, n bytes in
// all: the same window to a parser.
func padWindow(t testing.TB, w []byte, n int) []byte {
	t.Helper()
	if len(w) > n {
		t.Fatalf("a window of %d bytes cannot be padded to %d", len(w), n)
	}
	return append(bytes.Clone(w), bytes.Repeat([]byte{' '}, n-len(w))...)
}

// pub31 publishes payload at QoS 1 with mosquitto_pub over MQTT 3.1.1,
// the car's bridge's protocol, with the certificate cn; mosquitto_pub
// exits 0 once the broker acknowledged it.
func pub31(t *testing.T, f *fleet, cn, topic string, payload []byte) {
	t.Helper()
	exe, err := exec.LookPath("mosquitto_pub")
	if err != nil {
		if os.Getenv(brokertest.RequireEnv) == "1" {
			t.Fatal("mosquitto_pub not found (the Debian package mosquitto-clients)")
		}
		t.Log("mosquitto_pub not found: the MQTT 3.1.1 half of the row is left out")
		return
	}
	file := filepath.Join(t.TempDir(), "payload")
	if err := os.WriteFile(file, payload, 0o600); err != nil {
		t.Fatal(err)
	}
	cert, key := f.ca.Client(t, cn+"-31", cn)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, exe, "-h", "127.0.0.1", "-p", strconv.Itoa(f.opts.Port),
		"--cafile", f.ca.File, "--cert", cert, "--key", key, "-V", "mqttv311", "-q", "1",
		"-t", topic, "-f", file).CombinedOutput()
	if err != nil {
		t.Errorf("mosquitto_pub (MQTT 3.1.1) of %d bytes: %v\n%s", len(payload), err, out)
	}
}

// TestFleetReadersAreACLUsers: fleet.conf's plugin_opt_readers, who
// may subscribe, and plugin_opt_pushers, who push campaigns, are the
// user blocks of fleet.acl, what they may read, as shipped.
func TestFleetReadersAreACLUsers(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "mosquitto", "fleet.conf"))
	if err != nil {
		t.Fatal(err)
	}
	var readers []string
	for _, l := range strings.Split(string(b), "\n") {
		for _, opt := range []string{"plugin_opt_readers ", "plugin_opt_pushers "} {
			if v, ok := strings.CutPrefix(l, opt); ok {
				readers = append(readers, strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' })...)
			}
		}
	}
	users := aclUsers(t, filepath.Join("..", "..", "..", "deploy", "mosquitto", "fleet.acl"))
	if len(readers) == 0 || strings.Join(readers, " ") != strings.Join(users, " ") {
		t.Errorf("fleet.conf's readers %q, fleet.acl's users %q: want the same", readers, users)
	}
}

// TestFleetPluginConfig: the plugin refuses a configuration that would
// let nobody subscribe, or anybody: mosquitto does not start, and its
// log says why.
func TestFleetPluginConfig(t *testing.T) {
	for _, row := range []struct{ name, conf, log string }{
		{"no readers", "", "names no reader"},
		{"empty readers", "plugin_opt_readers ,\n", "names no reader"},
		{"a reader that is no name", "plugin_opt_readers ingest kart/01\n", `"kart/01" is no certificate name`},
		{"a wildcard reader", "plugin_opt_readers +\n", `"+" is no certificate name`},
		{"an unknown option", "plugin_opt_readers ingest\nplugin_opt_reader ingest-b\n", "unknown option plugin_opt_reader"},
	} {
		t.Run(row.name, func(t *testing.T) {
			dir := t.TempDir()
			plugin := brokertest.BuildPlugin(t, filepath.Join("..", "..", "..", "deploy", "mosquitto", "candec_fleet.c"))
			p, err := mosquitto.Start(context.Background(), mosquitto.Options{Dir: dir, Extra: "plugin " + plugin + "\n" + row.conf})
			if err == nil {
				_ = p.Stop(5 * time.Second)
				t.Fatal("mosquitto started")
			}
			if log := mosquitto.LogTail(dir, 20); !strings.Contains(err.Error()+log, row.log) {
				t.Errorf("the error %v and log\n%s\nsay nothing of %q", err, log, row.log)
			}
		})
	}
}
