package s3test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/internal/fleet/ingest"
	"github.com/yukart/candec/internal/fleet/lake"
	"github.com/yukart/candec/internal/fleet/lake/s3store"
	"github.com/yukart/candec/internal/lab/mosquitto"
	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/mqttclient"
	"github.com/yukart/candec/pipeline"
)

// ingestID is the instance's id: its files' names and its record's
// directory, _candec_ingest/<id>/.
const ingestID = "ingest1"

// carStream is what one vehicle publishes: its windows, in order, on
// fleet/<id>/yukart/window.
type carStream struct {
	id       string
	windows  [][]byte
	resent   [][]byte // published again at the end, as a bridge that lost its acknowledgements does
	distinct int      // windows (epoch, seq) among windows and resent
}

// testIngestLake: three cars publish their window streams to a real
// mosquitto (one with the id "..", one "%2E.", which a naive escape
// would put in the same partition), some windows twice; candec's
// ingest, in process, takes them into a lake in the bucket through the
// S3 store, several commits, and its end (as at SIGTERM) commits the
// rest. The lake, downloaded and read with DuckDB, holds per vehicle
// and message the rows published, and per signal its count, min and
// max; the commit record names every window once and every data file
// once.
func testIngestLake(t *testing.T, srv *server) {
	b := startBroker(t)
	cars := fleetStreams(t)
	st, err := open(t, srv, "s3://lake/ingest", writerKey, writerSecret, s3store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := ingest.Config{
		ID: ingestID, Conn: mqttclient.Settings{Broker: b.URL}, Buses: []ingest.Bus{{DB: kartDB(t)}},
		Dir: st.String(), Store: st, DBCHash: "sha256:s3test",
		MaxUnacked:     700, // several commits, and the last one at the end
		ConnectTimeout: 10 * time.Second,
	}
	c := runIngest(t, cfg, func() int { return publishFleet(t, b.URL, cars) })
	distinct := 0
	for _, car := range cars {
		distinct += car.distinct
	}
	if c.Windows != uint64(distinct) || c.Acked != c.Messages || c.Duplicates != c.Messages-uint64(distinct) ||
		len(c.Malformed) != 0 || c.Commits < 3 {
		t.Errorf("counters %+v: want %d windows in several commits, the rest skipped as duplicates, every message acknowledged", c, distinct)
	}
	t.Logf("%d messages: %d windows, %d rows, %d values in %d commits (%d files); %d duplicates skipped", c.Messages, c.Windows, c.Rows, c.Values, c.Commits, c.Files, c.Duplicates)

	dir := t.TempDir()
	rels := download(t, srv, "ingest", dir)
	want := map[string]*written{}
	for _, car := range cars {
		want[car.id] = expected(t, car)
	}
	checkFleet(t, dir, want)
	checkRecord(t, dir, rels, ingestID, 3, cars)
}

// startBroker starts a mosquitto on a free port, anonymous and
// without TLS: the fleet broker's certificates and ACL are tested with
// the service (TestFleetACL) and the ingest (TestBadInputThroughBroker).
func startBroker(t *testing.T) *mosquitto.Process {
	t.Helper()
	return brokertest.StartMosquitto(t, mosquitto.Options{Verbose: true})
}

// kartDB is the car's DBC.
func kartDB(t *testing.T) *dbc.Database {
	t.Helper()
	db, err := dbc.Load(filepath.Join(root, "testdata", "yukart.dbc"))
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// fleetStreams makes the cars' streams from the kart's capture, each
// car a run of its own (an epoch): kart01 every window in JSON, ".."
// every other one in MessagePack, "%2E." the first half in JSON; kart01
// sends 40 of its windows again.
func fleetStreams(t *testing.T) []carStream {
	t.Helper()
	all := carWindows(t, envelope.JSON, 1791563850000000000)
	odd := carWindows(t, envelope.Msgpack, 1791563860000000000)
	half := carWindows(t, envelope.JSON, 1791563870000000000)
	cars := []carStream{
		{id: "kart01", windows: all, resent: all[100:140], distinct: len(all)},
		{id: "..", distinct: len(odd) / 2},
		{id: "%2E.", windows: half[:len(half)/2], distinct: len(half) / 2},
	}
	for i := 1; i < len(odd); i += 2 {
		cars[1].windows = append(cars[1].windows, odd[i])
	}
	return cars
}

// carWindows returns the window stream the car publishes for the
// kart's capture under the default policy, in enc, in a run of the
// given epoch: the pipeline the service runs, offline.
func carWindows(t *testing.T, enc envelope.Encoding, epoch uint64) [][]byte {
	t.Helper()
	var out [][]byte
	sink := pipeline.SinkFunc(func(o *pipeline.Out) {
		if o.Kind == pipeline.KindWindow {
			out = append(out, slices.Clone(o.Payload))
		}
	})
	eng, err := pipeline.New(kartDB(t), pipeline.Config{Encoding: enc, Window: &pipeline.WindowConfig{}, Epoch: epoch}, sink)
	if err != nil {
		t.Fatal(err)
	}
	src, err := capture.Open(filepath.Join(root, "testdata", "idle.log"), capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := pipeline.RunOffline(context.Background(), src, eng, pipeline.OfflineOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(out) < 1000 {
		t.Fatalf("the capture made %d windows", len(out))
	}
	return out
}

// publishFleet publishes every car's windows at QoS 1, then the resent
// ones, and a few windows on a topic of a car whose id would be a path
// ("../kart01": a topic of more levels, which the ingest's filter does
// not match). It returns how many messages the ingest is to take.
func publishFleet(t *testing.T, url string, cars []carStream) int {
	t.Helper()
	c := brokertest.Connect(t, url)
	n := 0
	for _, car := range cars {
		for _, w := range car.windows {
			c.PublishQoS1("fleet/"+car.id+"/yukart/window", w, false)
			n++
		}
	}
	for _, w := range cars[0].windows[:10] {
		c.PublishQoS1("fleet/../kart01/yukart/window", w, false)
	}
	for _, car := range cars {
		for _, w := range car.resent {
			c.PublishQoS1("fleet/"+car.id+"/yukart/window", w, false)
			n++
		}
	}
	return n
}

// runIngest runs an instance of cfg until it has taken the messages
// publish published, then ends it as SIGTERM does (its context
// cancelled: it commits what it took and acknowledges that), and
// returns its counters.
func runIngest(t *testing.T, cfg ingest.Config, publish func() int) ingest.Counters {
	t.Helper()
	in, err := ingest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- in.Run(ctx) }()
	select {
	case <-in.Ready():
	case err := <-done:
		t.Fatalf("the ingest stopped before it subscribed: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the ingest has not subscribed within 30 s")
	}
	n := publish()
	deadline := time.Now().Add(60 * time.Second)
	for in.Counters().Messages < uint64(n) {
		select {
		case err := <-done:
			t.Fatalf("the ingest stopped before it took every message: %v; %+v", err, in.Counters())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ingest took %d of %d messages in 60 s", in.Counters().Messages, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the ingest's run: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the ingest has not ended 60 s after its context")
	}
	c := in.Counters()
	if c.Messages != uint64(n) {
		t.Errorf("the ingest took %d messages, %d were published to it", c.Messages, n)
	}
	return c
}

// expected is what the lake must hold of car's windows, each (epoch,
// seq) once, by the ingest's row rule (docs/ingest.md): in a window,
// the envelopes of one message with one ts make a row (a signal's
// value that its row has already starts another), and stale marks make
// none.
func expected(t *testing.T, car carStream) *written {
	t.Helper()
	bySignal := map[string]*dbc.Signal{}
	for _, s := range kartDB(t).Signals {
		bySignal[ingest.DefaultSignalPrefix+s.Name] = s
	}
	w := &written{rows: map[string]int64{}, sigs: map[string]*agg{}}
	seen := map[[2]uint64]bool{}
	var win envelope.Window
	for _, p := range append(slices.Clone(car.windows), car.resent...) {
		if err := envelope.ParseWindow(p, &win); err != nil {
			t.Fatal(err)
		}
		if seen[[2]uint64{win.Epoch, win.Seq}] {
			continue
		}
		seen[[2]uint64{win.Epoch, win.Seq}] = true
		type frameKey struct {
			m  *dbc.Message
			ts int64
		}
		perSignal := map[frameKey]map[*dbc.Signal]int64{} // the values of a signal in a frame
		for _, it := range win.Items {
			s := bySignal[string(it.Topic)]
			if s == nil {
				t.Fatalf("window item on %s: no signal of the DBC", it.Topic)
			}
			if it.Envelope.Stale() {
				continue
			}
			k := frameKey{s.Message, it.Envelope.TS}
			if perSignal[k] == nil {
				perSignal[k] = map[*dbc.Signal]int64{}
			}
			perSignal[k][s]++
			name := s.Message.Name + "." + s.Name
			if w.sigs[name] == nil {
				w.sigs[name] = &agg{}
			}
			w.sigs[name].add(it.Envelope.Float64())
		}
		for k, sigs := range perSignal {
			var rows int64
			for _, n := range sigs {
				rows = max(rows, n)
			}
			w.rows[k.m.Name] += rows
		}
	}
	if len(seen) != car.distinct {
		t.Fatalf("car %q publishes %d distinct windows, the test counts %d", car.id, len(seen), car.distinct)
	}
	return w
}

// manifest is what the test reads of a commit's manifest,
// _candec_ingest/<id>/<n>.json.
type manifest struct {
	Owner   string   `json:"owner"`
	Commit  uint64   `json:"commit"`
	Files   []string `json:"files"`
	Windows []struct {
		Vehicle string      `json:"vehicle"`
		Epoch   uint64      `json:"epoch"`
		Seqs    [][2]uint64 `json:"seqs"`
	} `json:"windows"`
}

// checkRecord checks the commit record of owner in the lake downloaded
// to dir (its objects rels): only manifests, at least commits of them,
// no unfinished commit left; every window published named by one
// manifest once, no other; every data file named by one manifest once,
// and every file named there in the lake.
func checkRecord(t *testing.T, dir string, rels []string, owner string, commits int, cars []carStream) {
	t.Helper()
	files := map[string]int{} // data file → the manifests that name it
	for _, r := range rels {
		if strings.HasSuffix(r, ".parquet") {
			files[r] = 0
		}
	}
	windows := map[string]int{} // "vehicle epoch seq" → the manifests that name it
	manifests := 0
	for _, r := range rels {
		if r == lake.MarkerName || strings.HasSuffix(r, ".parquet") {
			continue
		}
		if path.Dir(r) != ingest.ManifestDir+"/"+owner || strings.HasSuffix(r, ".pending.json") || !strings.HasSuffix(r, ".json") {
			t.Errorf("object %s: neither data, marker nor manifest", r)
			continue
		}
		m := readManifest(t, dir, r, owner)
		manifests++
		for _, f := range m.Files {
			if _, ok := files[f]; !ok {
				t.Errorf("%s names %s, which is not in the lake", r, f)
			}
			files[f]++
		}
		for _, w := range m.Windows {
			for _, s := range w.Seqs {
				for seq := s[0]; seq <= s[1]; seq++ {
					windows[fmt.Sprint(w.Vehicle, " ", w.Epoch, " ", seq)]++
				}
			}
		}
	}
	if manifests < commits {
		t.Errorf("%d manifests, want one per commit, %d or more", manifests, commits)
	}
	for f, n := range files {
		if n != 1 {
			t.Errorf("data file %s: named by %d manifests, want 1", f, n)
		}
	}
	published := map[string]bool{}
	var win envelope.Window
	for _, car := range cars {
		for _, p := range append(slices.Clone(car.windows), car.resent...) {
			if err := envelope.ParseWindow(p, &win); err != nil {
				t.Fatal(err)
			}
			published[fmt.Sprint(car.id, " ", win.Epoch, " ", win.Seq)] = true
		}
	}
	for k := range published {
		if n := windows[k]; n != 1 {
			t.Errorf("window %s: in %d manifests, want 1", k, n)
		}
	}
	for k, n := range windows {
		if !published[k] {
			t.Errorf("window %s: in %d manifests, never published", k, n)
		}
	}
}

// readManifest reads the manifest rel of the lake downloaded to dir,
// and checks that it is owner's commit of its name.
func readManifest(t *testing.T, dir, rel, owner string) manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	n, err := strconv.ParseUint(strings.TrimSuffix(path.Base(rel), ".json"), 10, 64)
	if err != nil || m.Owner != owner || m.Commit != n {
		t.Errorf("%s: owner %q, commit %d; want %q, the commit of its name", rel, m.Owner, m.Commit, owner)
	}
	return m
}
