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

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/internal/cmdkit/replay"
	"github.com/yukart/candec/internal/lab/mosquitto"
	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/mqttclient"
	"github.com/yukart/candec/pipeline"
)

// uplink is the fleet's path of the deploy/mosquitto files, run for
// real: candec on the car's mosquitto, bridged as bridge.conf says to a
// cloud mosquitto that takes fleet.acl, with TLS and the car's own
// client certificate, and a reader in the cloud.
type uplink struct {
	dir        string
	ca         *brokertest.CA
	cloud, car *mosquitto.Process
	cloudOpts  mosquitto.Options
	svc        *running
	reader     *windowReader
	stopReplay context.CancelFunc
	replayDone chan struct{} // closed when the replay has returned replayErr
	replayErr  error
}

// startUplink starts the uplink.
func startUplink(t *testing.T) *uplink {
	t.Helper()
	brokertest.RequireMosquitto(t) // the embedded broker has no bridges
	u := &uplink{dir: t.TempDir()}
	u.ca = brokertest.NewCA(t, u.dir)
	u.startCloud(t)
	u.startCar(t)
	u.reader = readWindows(t, u.cloud.URL, u.ca)

	db, err := dbc.Load("../testdata/yukart.dbc")
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, u.car.URL)
	cfg.Policy = ""                   // the built-in default
	cfg.WindowTopic = "yukart/window" // as bridge.conf forwards it; QoS 0, the default
	u.svc = startService(t, cfg, db)
	ctx, cancel := context.WithCancel(context.Background())
	u.stopReplay, u.replayDone = cancel, make(chan struct{})
	pub := rawPublisher(t, u.car.URL, "bridge-"+t.Name())
	go func() {
		_, err := replay.Run(ctx, replay.OpenFile(ctx, "../testdata/idle.log", capture.Options{}), pub,
			replay.Options{Loop: true, FirstSeq: 1})
		u.replayErr = err
		close(u.replayDone)
	}()
	t.Cleanup(func() { cancel(); <-u.replayDone })
	return u
}

// startCloud starts the cloud broker: client certificates whose common
// name is the user and the client id, the ACL as shipped, its state on
// disk.
func (u *uplink) startCloud(t *testing.T) {
	t.Helper()
	dir := filepath.Join(u.dir, "cloud")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	cert, key := u.ca.Server(t, "cloud")
	u.cloudOpts = mosquitto.Options{
		Dir: dir, Verbose: true, Persistence: true,
		CAFile: u.ca.File, CertFile: cert, KeyFile: key,
		RequireCertificate: true, IdentityAsUsername: true,
		ACLFile: filepath.Join("..", "deploy", "mosquitto", "fleet.acl"),
		// fleet.conf's settings as shipped: its plugin (readers: the
		// ingest), queue and message size limit.
		Extra: brokertest.FleetConf(t, filepath.Join("..", "deploy", "mosquitto", "fleet.conf"),
			brokertest.BuildPlugin(t, filepath.Join("..", "deploy", "mosquitto", "candec_fleet.c")), nil) +
			"use_username_as_clientid true\n",
	}
	u.restartCloud(t)
}

// restartCloud starts the cloud broker, on its old port if it ran
// before.
func (u *uplink) restartCloud(t *testing.T) {
	t.Helper()
	u.cloud = brokertest.StartMosquitto(t, u.cloudOpts)
	u.cloudOpts.Port = portOf(t, u.cloud.Addr)
}

// startCar starts the car's broker with bridge.conf as shipped, pointed
// at the cloud broker with the test's certificates.
func (u *uplink) startCar(t *testing.T) {
	t.Helper()
	dir := filepath.Join(u.dir, "car")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	u.car = brokertest.StartMosquitto(t, mosquitto.Options{Dir: dir, Verbose: true, Persistence: true, Extra: u.bridgeConf(t)})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("cloud broker:\n%s", mosquitto.LogTail(u.cloudOpts.Dir, 20))
		}
	})
}

// replaceLines replaces each line that starts with a key of with by its
// value; a key no line starts with fails the test (the shipped file
// changed under it).
func replaceLines(t *testing.T, text string, with map[string]string) string {
	t.Helper()
	lines := strings.Split(text, "\n")
	for prefix, line := range with {
		found := false
		for i, l := range lines {
			if strings.HasPrefix(l, prefix) {
				lines[i], found = line, true
			}
		}
		if !found {
			t.Fatalf("bridge.conf has no line %q…", prefix)
		}
	}
	return strings.Join(lines, "\n")
}

func portOf(t *testing.T, addr string) int {
	t.Helper()
	var port int
	if _, err := fmt.Sscanf(addr[strings.LastIndex(addr, ":")+1:], "%d", &port); err != nil {
		t.Fatal(err)
	}
	return port
}

// windowReader is the cloud's reader: certificate "ingest", a session
// the broker keeps across its own restart, QoS 1.
type windowReader struct {
	mu    sync.Mutex
	seqs  map[string][]uint64 // by topic
	bytes int
	// span is the frame time the windows cover, first to last.
	first, end int64
	epochs     map[string]uint64
	bad        []string
}

func readWindows(t *testing.T, rawURL string, ca *brokertest.CA) *windowReader {
	t.Helper()
	r := &windowReader{seqs: map[string][]uint64{}, epochs: map[string]uint64{}}
	cert, key := ca.Client(t, "ingest", "ingest")
	cfg, err := mqttclient.Config{
		Settings:     mqttclient.Settings{Broker: rawURL, ClientID: "ingest", CAFile: ca.File, CertFile: cert, KeyFile: key},
		ReconnectMax: 500 * time.Millisecond,
		OnPublish:    r.record,
	}.AutopahoConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.CleanStartOnInitialConnection = false
	cfg.SessionExpiryInterval = 3600
	cfg.OnConnectionUp = func(cm *autopaho.ConnectionManager, _ *paho.Connack) {
		go func() {
			_, _ = cm.Subscribe(context.Background(), &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "fleet/+/yukart/window", QoS: 1}}})
		}()
	}
	ctx, cancel := context.WithCancel(context.Background())
	cm, err := autopaho.NewConnection(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		dctx, dcancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer dcancel()
		_ = cm.Disconnect(dctx)
		cancel()
	})
	return r
}

func (r *windowReader) record(p *paho.Publish) {
	var w envelope.Window
	err := envelope.ParseWindow(p.Payload, &w)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.bad = append(r.bad, fmt.Sprintf("%s: %v", p.Topic, err))
		return
	}
	if e, ok := r.epochs[p.Topic]; ok && e != w.Epoch {
		r.bad = append(r.bad, fmt.Sprintf("%s: epoch %d after %d", p.Topic, w.Epoch, e))
	}
	r.epochs[p.Topic] = w.Epoch
	r.seqs[p.Topic] = append(r.seqs[p.Topic], w.Seq)
	r.bytes += len(p.Payload)
	if r.first == 0 || w.Start < r.first {
		r.first = w.Start
	}
	r.end = max(r.end, w.End)
}

// volume returns the payload bytes received and the seconds of frame
// time they cover.
func (r *windowReader) volume() (int, float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bytes, float64(r.end-r.first) / 1e9
}

// count returns how many windows arrived on topic, how many distinct
// seqs, and the highest.
func (r *windowReader) count(topic string) (n, distinct int, last uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[uint64]bool{}
	for _, s := range r.seqs[topic] {
		seen[s] = true
		last = max(last, s)
	}
	return len(r.seqs[topic]), len(seen), last
}

// fleetTopic is yukart/window of kart01 in the cloud.
const fleetTopic = "fleet/kart01/yukart/window"

// outage stops the cloud broker for d and starts it again on its port;
// it returns how many windows candec published meanwhile.
func (u *uplink) outage(t *testing.T, d time.Duration) float64 {
	t.Helper()
	published := func() float64 { return counter(t, u.svc.m.published[pipeline.KindWindow]) }
	if err := u.cloud.Stop(5 * time.Second); err != nil {
		t.Fatalf("stop the cloud broker: %v", err)
	}
	before := published()
	time.Sleep(d)
	during := published() - before
	u.restartCloud(t)
	return during
}

// finish stops the replay, then candec (whose counters are then
// final), waits until the reader has every window published or within
// passes, and returns the number published.
func (u *uplink) finish(t *testing.T, within time.Duration) float64 {
	t.Helper()
	u.stopReplay()
	<-u.replayDone
	if err := u.replayErr; err != nil && err != context.Canceled {
		t.Fatalf("replay: %v", err)
	}
	time.Sleep(500 * time.Millisecond) // the last batches decoded
	u.svc.stop(t)
	want := counter(t, u.svc.m.published[pipeline.KindWindow])
	deadline := time.Now().Add(within)
	for {
		_, distinct, _ := u.reader.count(fleetTopic)
		if float64(distinct) >= want || time.Now().After(deadline) {
			return want
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestUplinkSurvivesOutage stops the cloud broker for 60 s (10 s with
// -short) while candec publishes the window stream on the car, and
// requires every window, by seq, in the cloud once the link is back.
func TestUplinkSurvivesOutage(t *testing.T) {
	d := 60 * time.Second
	if testing.Short() {
		d = 10 * time.Second
	}
	u := startUplink(t)
	waitUntil(t, "windows in the cloud", func() bool { n, _, _ := u.reader.count(fleetTopic); return n >= 100 })
	during := u.outage(t, d)
	if during < 50 {
		t.Fatalf("candec published %v windows during the outage; the test needs some", during)
	}
	time.Sleep(2 * time.Second) // the link back up, windows flowing again
	want := u.finish(t, 60*time.Second)
	n, distinct, last := u.reader.count(fleetTopic)
	bytes, secs := u.reader.volume()
	if float64(distinct) != want || float64(last) != want {
		t.Errorf("cloud got %d windows (%d distinct seqs, highest %d); want every one of the %v published, %v of them during a %s outage",
			n, distinct, last, want, during, d)
	}
	if u.reader.bad != nil {
		t.Errorf("cloud got bad windows: %q", u.reader.bad)
	}
	t.Logf("%v windows published, %v during the %s outage; cloud got %d (%d distinct), %.0f bytes of payload a second, %.0f windows a second",
		want, during, d, n, distinct, float64(bytes)/secs, float64(n)/secs)
}

// connectCert connects to the cloud broker with a client certificate
// whose common name is cn, and waits for the connection.
func connectCert(t *testing.T, rawURL string, ca *brokertest.CA, cn string) *aclClient {
	t.Helper()
	cert, key := ca.Client(t, cn, cn)
	c, err := connectWith(t, mqttclient.Settings{Broker: rawURL, ClientID: cn, CAFile: ca.File, CertFile: cert, KeyFile: key})
	if err != nil {
		t.Fatalf("%s: %v", cn, err)
	}
	return c
}

// TestFleetACL: with fleet.acl as shipped, a car writes under its own
// prefix and nowhere else: kart02 cannot put a window into kart01's
// stream, and the ingest, which reads every car's, never sees one.
func TestFleetACL(t *testing.T) {
	brokertest.RequireMosquitto(t) // the embedded broker has no client certificates
	u := &uplink{dir: t.TempDir()}
	u.ca = brokertest.NewCA(t, u.dir)
	u.startCloud(t)
	ingest := connectCert(t, u.cloud.URL, u.ca, "ingest")
	ingest.subscribe(t, "fleet/#")
	kart02 := connectCert(t, u.cloud.URL, u.ca, "kart02")
	if rc := kart02.publish(t, "fleet/kart02/yukart/window", "own"); rc != 0 {
		t.Fatalf("kart02 on its own prefix: reason %#x, want 0", rc)
	}
	ingest.wait(t, "fleet/kart02/yukart/window own")
	for _, topic := range []string{"fleet/kart01/yukart/window", "fleet/kart01/bridge/state", "yukart/window", "fleet/kart020/x"} {
		if rc := kart02.publish(t, topic, "spoof"); rc != 0x87 {
			t.Errorf("kart02 publishing on %s: reason %#x, want 0x87 (not authorized)", topic, rc)
		}
	}
	if rc := kart02.publish(t, "fleet/kart02/yukart/window", "after"); rc != 0 {
		t.Fatalf("kart02 on its own prefix: reason %#x, want 0", rc)
	}
	ingest.wait(t, "fleet/kart02/yukart/window after")
	for _, m := range ingest.received() {
		if strings.HasSuffix(m, " spoof") {
			t.Errorf("the ingest received %q", m)
		}
	}
}

// bridgeConf is the shipped deploy/mosquitto/bridge.conf as the car
// kart01 runs it against the cloud broker of u: its address and the
// fleet CA's certificates put in, every other line as shipped.
func (u *uplink) bridgeConf(t *testing.T) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "deploy", "mosquitto", "bridge.conf"))
	if err != nil {
		t.Fatal(err)
	}
	cert, key := u.ca.Client(t, "kart01", "kart01")
	return replaceLines(t, string(text), map[string]string{
		"address ":         "address " + u.cloud.Addr,
		"bridge_cafile ":   "bridge_cafile " + u.ca.File,
		"bridge_certfile ": "bridge_certfile " + cert,
		"bridge_keyfile ":  "bridge_keyfile " + key,
	})
}
