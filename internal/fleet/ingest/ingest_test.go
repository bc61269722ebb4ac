package ingest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/yukart/candec/envelope"
)

// brokerConfig is an instance of the test DBC on the fleet broker,
// with the certificate "ingest", writing the lake dir.
func brokerConfig(t testing.TB, f *fleet, id, dir string) Config {
	cfg := Config{ID: id, Conn: f.settings(t, "ingest"), Buses: []Bus{{DB: loadDB(t)}}, Dir: dir, DBCHash: "sha256:test",
		ConnectTimeout: 10 * time.Second}
	return cfg
}

// TestIngestThroughBroker: a car's window stream, published on
// fleet/kart01/yukart/window to the fleet's broker as shipped (TLS,
// client certificates, fleet.acl), lands in the lake under
// vehicle=kart01, every value once at its frame's time; the messages
// are acknowledged (a second start of the instance gets none again).
func TestIngestThroughBroker(t *testing.T) {
	f := startFleet(t)
	wins := carWindows(t, envelope.Msgpack)
	dir := t.TempDir()
	cfg := brokerConfig(t, f, "a", dir)
	cfg.MaxUnacked = 500 // several commits
	r := startIngest(t, cfg)
	f.car(t, "kart01").publish(t, wins)
	r.waitFor(t, "every window", func(c Counters) bool { return c.Windows == uint64(len(wins)) })
	r.stop()
	if r.err != nil {
		t.Fatal(r.err)
	}
	c := r.in.Counters()
	if c.Commits < 3 || c.Acked != uint64(len(wins)) || c.Duplicates != 0 || len(c.Malformed) != 0 {
		t.Errorf("counters %+v: want several commits, every message acknowledged once", c)
	}
	sameCells(t, lakeCells(t, dir), published(t, "kart01", wins))
	labels, want := labelCells(t, dir), publishedLabels(t, "kart01", wins)
	if len(want) == 0 {
		t.Fatal("no label published: the test tests less than it says")
	}
	for k, w := range want {
		if g := labels[k]; !slices.Equal(g, w) {
			t.Errorf("%+v: labels %q, want %q", k, g, w)
		}
	}
	if len(labels) != len(want) {
		t.Errorf("%d labelled cells, want %d", len(labels), len(want))
	}

	again := startIngest(t, brokerConfig(t, f, "a", dir))
	time.Sleep(time.Second)
	again.stop()
	if c := again.in.Counters(); c.Messages != 0 {
		t.Errorf("the broker sent %d messages again: they were not acknowledged", c.Messages)
	}
}

// TestCrashBetweenCommitAndAck: an instance that dies after a commit's
// manifest and before its acknowledgements reached the broker: the
// broker sends those windows again to the next start, which skips
// every one of them (they are in its manifests) and takes the rest:
// the lake holds every value once.
func TestCrashBetweenCommitAndAck(t *testing.T) {
	f := startFleet(t)
	wins := carWindows(t, envelope.JSON)
	dir := t.TempDir()
	cfg := brokerConfig(t, f, "a", dir)
	cfg.MaxUnacked = 500
	cfg.afterManifest = func(n uint64) error {
		if n == 1 {
			return errCrash
		}
		return nil
	}
	first := startIngest(t, cfg)
	f.car(t, "kart01").publish(t, wins)
	<-first.done
	if first.err != errCrash {
		t.Fatalf("first run: %v, want the crash", first.err)
	}
	if c := first.in.Counters(); c.Acked != 500 || c.Commits != 1 {
		t.Fatalf("first run: acked %d in %d commits, want 500 in 1 (commit 1 never acknowledged)", c.Acked, c.Commits)
	}
	cfg.afterManifest = nil
	second := startIngest(t, cfg)
	second.waitFor(t, "every window", func(c Counters) bool { return c.Windows+1000 >= uint64(len(wins)) })
	second.stop()
	if second.err != nil {
		t.Fatal(second.err)
	}
	if c := second.in.Counters(); c.Duplicates != 500 {
		t.Errorf("second run skipped %d windows, want the 500 of the commit never acknowledged", c.Duplicates)
	}
	sameCells(t, lakeCells(t, dir), published(t, "kart01", wins))
}

// TestResendAfterReconnect: the broker restarts while the instance holds
// windows it took and has not committed; it sends them again on the new
// connection (QoS 1, the session persists), and the instance, which
// has them already, writes them once and acknowledges the new
// delivery.
func TestResendAfterReconnect(t *testing.T) {
	f := startFleet(t)
	wins := carWindows(t, envelope.JSON)
	dir := t.TempDir()
	cfg := brokerConfig(t, f, "a", dir)
	cfg.MaxUnacked, cfg.RollAge = ReceiveMaximum, time.Hour // no commit before the end
	r := startIngest(t, cfg)
	half := len(wins) / 2
	kart := f.car(t, "kart01")
	kart.publish(t, wins[:half])
	r.waitFor(t, "the first half", func(c Counters) bool { return c.Windows == uint64(half) })
	if err := f.b.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	f.start(t)
	r.waitFor(t, "the resend", func(c Counters) bool { return c.Duplicates == uint64(half) })
	kart.publish(t, wins[half:])
	r.waitFor(t, "every window", func(c Counters) bool { return c.Windows == uint64(len(wins)) })
	r.stop()
	if r.err != nil {
		t.Fatal(r.err)
	}
	if c := r.in.Counters(); c.Commits != 1 || c.Acked != uint64(len(wins)) {
		t.Errorf("%d commits acknowledged %d messages; want 1 acknowledging the %d of the live connection", c.Commits, c.Acked, len(wins))
	}
	sameCells(t, lakeCells(t, dir), published(t, "kart01", wins))
	again := startIngest(t, brokerConfig(t, f, "a", dir))
	time.Sleep(time.Second)
	again.stop()
	if c := again.in.Counters(); c.Messages != 0 {
		t.Errorf("the broker sent %d messages again: they were not acknowledged", c.Messages)
	}
}

// TestGroupSplitsOneVehicle: two instances of one group (each with a
// certificate of its own) split one car's stream: each takes a share,
// the union of their rows is every value once, none twice. One of them
// stops halfway and starts again: the broker kept its share meanwhile.
func TestGroupSplitsOneVehicle(t *testing.T) {
	f := startFleet(t)
	f.opts.ACLFile = groupACL(t, "ingest-a", "ingest-b")
	if err := f.b.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	f.start(t)
	wins := carWindows(t, envelope.Msgpack)
	dir := t.TempDir()
	member := func(id string) Config {
		cfg := brokerConfig(t, f, id, dir)
		cfg.Conn = f.settings(t, "ingest-"+id)
		cfg.Group, cfg.MaxUnacked = "lake", 300
		return cfg
	}
	a, b := startIngest(t, member("a")), startIngest(t, member("b"))
	kart := f.car(t, "kart01")
	half := len(wins) / 2
	kart.publish(t, wins[:half])
	taken := func(rs ...*running) uint64 {
		var n uint64
		for _, r := range rs {
			n += r.in.Counters().Windows
		}
		return n
	}
	a.waitFor(t, "the first half", func(Counters) bool { return taken(a, b) == uint64(half) })
	b.stop()
	if b.err != nil {
		t.Fatal(b.err)
	}
	kart.publish(t, wins[half:])
	time.Sleep(time.Second)
	whileAway := a.in.Counters().Windows
	b2 := startIngest(t, member("b"))
	a.waitFor(t, "every window", func(Counters) bool { return taken(a, b, b2) == uint64(len(wins)) })
	a.stop()
	b2.stop()
	ca, cb, cb2 := a.in.Counters(), b.in.Counters(), b2.in.Counters()
	t.Logf("a took %d windows (%d of them while b was away), b %d, b again %d", ca.Windows, whileAway, cb.Windows, cb2.Windows)
	if ca.Windows == 0 || cb.Windows == 0 || cb2.Windows == 0 {
		t.Errorf("a share is empty: a %d, b %d, b again %d", ca.Windows, cb.Windows, cb2.Windows)
	}
	if d := ca.Duplicates + cb.Duplicates + cb2.Duplicates; d != 0 {
		t.Errorf("%d duplicates: a member was sent a window twice", d)
	}
	sameCells(t, lakeCells(t, dir), published(t, "kart01", wins))
}

// groupACL writes fleet.acl as shipped plus a reader block for each
// of users, the group's certificates, and returns its path.
func groupACL(t testing.TB, users ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "mosquitto", "fleet.acl"))
	if err != nil {
		t.Fatal(err)
	}
	acl := string(b)
	for _, u := range users {
		acl += "\nuser " + u + "\ntopic read fleet/#\n"
	}
	name := filepath.Join(t.TempDir(), "fleet.acl")
	if err := os.WriteFile(name, []byte(acl), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestFailingStoreNeverAcked: a lake whose store refuses a data file
// mid-commit ends the instance with ErrCommit, nothing of the commit
// acknowledged; the files it made visible are removed at the next
// start, and the broker sends every window again: once in the lake.
func TestFailingStoreNeverAcked(t *testing.T) {
	f := startFleet(t)
	wins := carWindows(t, envelope.JSON)
	store := newMemStore()
	var committed int
	store.failWrite = func(rel string) error {
		if strings.HasSuffix(rel, ".parquet") {
			if committed++; committed == 5 {
				return errors.New("memstore: refused")
			}
		}
		return nil
	}
	cfg := brokerConfig(t, f, "a", "mem")
	cfg.Store, cfg.MaxUnacked = store, 500
	first := startIngest(t, cfg)
	f.car(t, "kart01").publish(t, wins)
	<-first.done
	if !errors.Is(first.err, ErrCommit) || first.in.Counters().Acked != 0 {
		t.Fatalf("first run: %v, %d acknowledged; want ErrCommit, none", first.err, first.in.Counters().Acked)
	}
	visible := 0
	for _, n := range store.names() {
		if strings.HasSuffix(n, ".parquet") {
			visible++
		}
	}
	if visible == 0 {
		t.Fatal("the failed commit made no file visible: the test tests less than it says")
	}
	store.failWrite = nil
	second := startIngest(t, cfg)
	second.waitFor(t, "every window", func(c Counters) bool { return c.Windows == uint64(len(wins)) })
	second.stop()
	if second.err != nil {
		t.Fatal(second.err)
	}
	sameCells(t, storeCells(t, store), published(t, "kart01", wins))
}

// TestBadInputThroughBroker: on the fleet's topics, payloads that are no
// window and a vehicle id that is no safe path component: the first are
// counted and skipped, the second written escaped, as vehicle=%2E. for
// "..", never as the directory "..".
func TestBadInputThroughBroker(t *testing.T) {
	f := startFleet(t)
	f.opts.ACLFile = groupACL(t) // as shipped; cars write their own prefix only
	wins := carWindows(t, envelope.JSON)
	dir := t.TempDir()
	cfg := brokerConfig(t, f, "a", dir)
	reg := prometheus.NewRegistry()
	cfg.Registerer = reg
	// A window a car left retained, before the instance subscribed: the
	// broker sends it at every subscription, and it is never written.
	f.car(t, "kart09").publishRetained(t, wins[50:51], true)
	r := startIngest(t, cfg)
	dots := f.car(t, "..")
	dots.publish(t, [][]byte{[]byte("not a window"), []byte(`{"seq":1}`), []byte{0x81, 0xa1}})
	dots.publish(t, wins[:50])
	r.waitFor(t, "every message", func(c Counters) bool { return c.Messages == 54 })
	r.stop()
	if r.err != nil {
		t.Fatal(r.err)
	}
	if c := r.in.Counters(); c.Malformed[ReasonWindow] != 3 || c.Malformed[ReasonRetained] != 1 || c.Windows != 50 || c.Acked != 54 {
		t.Errorf("counters %+v: want 3 malformed windows, 1 retained, 50 windows, 54 acknowledged", c)
	}
	if _, err := os.Stat(filepath.Join(dir, "vehicle=kart09")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the retained window made a partition: %v", err)
	}
	for _, m := range []struct {
		name, label, value string
		want               float64
	}{
		{"candec_ingest_malformed_total", "reason", "window", 3},
		{"candec_ingest_windows_total", "vehicle", "%2E.", 50},
		{"candec_ingest_window_gaps_total", "vehicle", "%2E.", 0},
		{"candec_ingest_commits_total", "", "", 1},
	} {
		if got := gathered(t, reg, m.name, m.label, m.value); got != m.want {
			t.Errorf("%s{%s=%q}: got %v, want %v", m.name, m.label, m.value, got, m.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "vehicle=%2E.")); err != nil {
		t.Errorf("no partition vehicle=%%2E.: %v", err)
	}
	sameCells(t, lakeCells(t, dir), published(t, "%2E.", wins[:50]))
}

// TestHoldsTensOfThousandsUnacked: with the fleet's broker as shipped,
// an instance holds a backlog of 16 cars' windows (29,952 messages)
// unacknowledged until its one commit: its Receive Maximum, not
// mosquitto's max_inflight_messages (20), bounds what is in flight.
func TestHoldsTensOfThousandsUnacked(t *testing.T) {
	if testing.Short() {
		t.Skip("a backlog of 29,952 messages")
	}
	c, elapsed, _ := backlog(t, envelope.Msgpack, 16, func() {}, func() {})
	if c.Commits != 1 || c.Acked != 16*1872 || c.Duplicates != 0 {
		t.Errorf("%d commits acknowledged %d (%d duplicates); want 1 of %d", c.Commits, c.Acked, c.Duplicates, 16*1872)
	}
	t.Logf("%d windows in one commit in %v", c.Windows, elapsed.Round(time.Millisecond))
}

// gathered returns the value of the series of name whose label is
// value ("" for any), and instance "a"; -1 when there is none.
func gathered(t testing.TB, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "instance" && lp.GetValue() != "a" || label != "" && lp.GetName() == label && lp.GetValue() != value {
					continue metrics
				}
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return -1
}

// TestGroupMemberCrash: a member of a group dies between a commit's
// manifest and its acknowledgements. mosquitto keeps that commit's
// messages in the member's session, hands none of them to the other
// member, and sends them to the member when it starts again, which
// skips them: the union exact, none twice.
func TestGroupMemberCrash(t *testing.T) {
	f := startFleet(t)
	f.opts.ACLFile = groupACL(t, "ingest-a", "ingest-b")
	if err := f.b.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	f.start(t)
	wins := carWindows(t, envelope.Msgpack)
	dir := t.TempDir()
	member := func(id string) Config {
		cfg := brokerConfig(t, f, id, dir)
		cfg.Conn = f.settings(t, "ingest-"+id)
		cfg.Group, cfg.MaxUnacked, cfg.RollAge = "lake", 200, 200*time.Millisecond
		return cfg
	}
	crashing := member("b")
	crashing.afterManifest = func(n uint64) error {
		if n == 1 {
			return errCrash
		}
		return nil
	}
	a, b := startIngest(t, member("a")), startIngest(t, crashing)
	f.car(t, "kart01").publish(t, wins)
	<-b.done
	if b.err != errCrash {
		t.Fatalf("b: %v, want the crash", b.err)
	}
	b2 := startIngest(t, member("b"))
	taken := func() uint64 { return a.in.Counters().Windows + b.in.Counters().Windows + b2.in.Counters().Windows }
	a.waitFor(t, "every window", func(Counters) bool { return taken() == uint64(len(wins)) })
	a.stop()
	b2.stop()
	ca, cb, cb2 := a.in.Counters(), b.in.Counters(), b2.in.Counters()
	t.Logf("a took %d windows, b %d (acknowledged %d), b again %d (%d skipped)", ca.Windows, cb.Windows, cb.Acked, cb2.Windows, cb2.Duplicates)
	if ca.Duplicates != 0 || cb2.Duplicates == 0 || cb2.Duplicates != cb.Windows-cb.Acked {
		t.Errorf("duplicates: a %d, b again %d; want none for a, the %d of b's unacknowledged commit for b", ca.Duplicates, cb2.Duplicates, cb.Windows-cb.Acked)
	}
	sameCells(t, lakeCells(t, dir), published(t, "kart01", wins))
}

// TestGroupMemberLeaves: a member that leaves for good (Leave)
// unsubscribes, takes what was on its way, commits it and ends its
// session: the broker gives the rest of the stream to the other member,
// and the union is exact. Without Leave, the member's share would wait
// for it in its session.
func TestGroupMemberLeaves(t *testing.T) {
	f := startFleet(t)
	f.opts.ACLFile = groupACL(t, "ingest-a", "ingest-b")
	if err := f.b.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	f.start(t)
	wins := carWindows(t, envelope.Msgpack)
	dir := t.TempDir()
	member := func(id string) Config {
		cfg := brokerConfig(t, f, id, dir)
		cfg.Conn = f.settings(t, "ingest-"+id)
		cfg.Group, cfg.MaxUnacked = "lake", 300
		return cfg
	}
	leaving := member("b")
	leaving.Leave = true
	a, b := startIngest(t, member("a")), startIngest(t, leaving)
	kart := f.car(t, "kart01")
	half := len(wins) / 2
	kart.publish(t, wins[:half])
	a.waitFor(t, "the first half", func(Counters) bool { return a.in.Counters().Windows+b.in.Counters().Windows == uint64(half) })
	b.stop()
	if b.err != nil {
		t.Fatal(b.err)
	}
	kart.publish(t, wins[half:])
	a.waitFor(t, "the rest", func(c Counters) bool { return c.Windows+b.in.Counters().Windows == uint64(len(wins)) })
	a.stop()
	if a.err != nil {
		t.Fatal(a.err)
	}
	sameCells(t, lakeCells(t, dir), published(t, "kart01", wins))
	again := startIngest(t, member("b"))
	time.Sleep(500 * time.Millisecond)
	again.stop()
	if c := again.in.Counters(); c.Messages != 0 {
		t.Errorf("b's session kept %d messages after it left", c.Messages)
	}
}
