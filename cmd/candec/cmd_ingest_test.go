package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/parquet-go/parquet-go"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/cmdkit/cli"
	"github.com/yukart/candec/internal/lab/mosquitto"
	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/mqttclient"
	"github.com/yukart/candec/pipeline"
)

// TestIngestSIGTERMCommits: candec ingest, a real process, holds the
// windows it took (its roll is an hour away); SIGTERM makes it commit
// them, acknowledge them and exit 0: the lake has them, with their
// manifest, and the broker sends none of them again.
func TestIngestSIGTERMCommits(t *testing.T) {
	b := brokertest.StartMosquitto(t, mosquitto.Options{})
	lake := filepath.Join(t.TempDir(), "lake")
	args := []string{"ingest", "--broker", b.URL, "--dbc", yukartDBC, "--out-dir", lake, "--id", "sigterm", "--roll-age", "1h"}
	p, stderr := startCandec(t, nil, args...)
	waitStderr(t, p, stderr, "subscribed", 1)
	wins := testWindows(t)
	publishQoS1(t, b.URL, "fleet/kart07/yukart/window", wins)
	time.Sleep(500 * time.Millisecond) // delivered to the ingest, held there
	sendSignal(t, p, syscall.SIGTERM)
	if code := exitOf(t, p, promptly, stderr); code != 0 {
		t.Fatalf("exit status %d after SIGTERM, want 0\n%s", code, stderr.String())
	}
	if want := regexp.MustCompile(` (\d+) windows of 1 vehicles, \d+ rows .* 1 commits`); !strings.Contains(stderr.String(), " "+strconv.Itoa(len(wins))+" windows of 1 vehicles") || !want.MatchString(stderr.String()) {
		t.Errorf("summary: %s; want %d windows in 1 commit", stderr.String(), len(wins))
	}
	data, _ := filepath.Glob(filepath.Join(lake, "vehicle=kart07", "message=*", "date=*", "can-sigterm-0000000000.parquet"))
	manifest, err := os.ReadFile(filepath.Join(lake, "_candec_ingest", "sigterm", "0000000000.json"))
	if len(data) == 0 || err != nil || !strings.Contains(string(manifest), `"seqs":[[1,`+strconv.Itoa(len(wins))+`]]`) {
		t.Errorf("lake: %d data files, manifest %s (%v)", len(data), manifest, err)
	}
	p2, stderr2 := startCandec(t, nil, args...)
	waitStderr(t, p2, stderr2, "subscribed", 1)
	time.Sleep(500 * time.Millisecond)
	sendSignal(t, p2, syscall.SIGTERM)
	if code := exitOf(t, p2, promptly, stderr2); code != 0 || !strings.Contains(stderr2.String(), "candec ingest: 0 messages") {
		t.Errorf("second start: exit %d, %s; want 0 messages (every one acknowledged)", code, stderr2.String())
	}
}

// testWindows is the window stream of the test capture, as the car
// publishes it under the default policy.
func testWindows(t *testing.T) [][]byte {
	t.Helper()
	db, err := dbc.Load(yukartDBC)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	eng, err := pipeline.New(db, pipeline.Config{Window: &pipeline.WindowConfig{}, Epoch: 1}, pipeline.SinkFunc(func(o *pipeline.Out) {
		if o.Kind == pipeline.KindWindow {
			out = append(out, slices.Clone(o.Payload))
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	src, err := capture.Open(filepath.Join("..", "..", "testdata", "idle.log"), capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := pipeline.RunOffline(context.Background(), src, eng, pipeline.OfflineOptions{}); err != nil {
		t.Fatal(err)
	}
	return out
}

// publishQoS1 publishes payloads on topic at QoS 1, in order.
func publishQoS1(t *testing.T, url, topic string, payloads [][]byte) {
	t.Helper()
	at := mqttclient.NewAttempts()
	cm, err := mqttclient.Connect(context.Background(), mqttclient.Config{Settings: mqttclient.Settings{Broker: url, ClientID: "car-" + t.Name()}, OnConnectError: at.Record})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = cm.Disconnect(ctx)
	}()
	if err := at.Await(context.Background(), cm, url, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, p := range payloads {
		if _, err := cm.Publish(context.Background(), &paho.Publish{Topic: topic, QoS: 1, Payload: p}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIngestSIGKILLResumes: candec ingest killed (SIGKILL) while it
// commits every 100 windows, then started again: the lake's manifests
// cover every window once, every data file belongs to one manifest
// (an unfinished commit's files are gone), and the files hold the rows
// the manifests count.
func TestIngestSIGKILLResumes(t *testing.T) {
	// fleet.conf's queue: mosquitto's default, 1,000, drops what comes
	// for the instance while it is away past that.
	b := brokertest.StartMosquitto(t, mosquitto.Options{Verbose: true, Extra: "max_queued_messages 360000\n"})
	lake := filepath.Join(t.TempDir(), "lake")
	args := []string{"ingest", "--broker", b.URL, "--dbc", yukartDBC, "--out-dir", lake, "--id", "k", "--max-unacked", "100", "--roll-age", "300ms"}
	p, stderr := startCandec(t, nil, args...)
	waitStderr(t, p, stderr, "subscribed", 1)
	wins := testWindows(t)
	published := make(chan struct{})
	go func() { defer close(published); publishQoS1(t, b.URL, "fleet/kart07/yukart/window", wins) }()
	manifests := filepath.Join(lake, "_candec_ingest", "k")
	for deadline := time.Now().Add(promptly); ; time.Sleep(time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(manifests, "*.json")); len(m) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no 3 commits within %v:\n%s", promptly, stderr.String())
		}
	}
	sendSignal(t, p, syscall.SIGKILL)
	exitOf(t, p, promptly, stderr)
	p2, stderr2 := startCandec(t, nil, args...)
	waitStderr(t, p2, stderr2, "subscribed", 1)
	<-published
	for deadline := time.Now().Add(4 * promptly); committedWindows(t, manifests) < len(wins); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d windows committed:\n%s", committedWindows(t, manifests), len(wins), stderr2.String())
		}
	}
	sendSignal(t, p2, syscall.SIGTERM)
	if code := exitOf(t, p2, promptly, stderr2); code != 0 {
		t.Fatalf("exit status %d after SIGTERM\n%s", code, stderr2.String())
	}
	checkLakeRecord(t, lake, manifests, len(wins))
	t.Logf("killed: %s", lastLine(stderr.String()))
}

// ingestManifest is what the test reads of a manifest.
type ingestManifest struct {
	Files   []string `json:"files"`
	Rows    int64    `json:"rows"`
	Windows []struct {
		Seqs [][2]uint64 `json:"seqs"`
	} `json:"windows"`
}

func readManifests(t *testing.T, dir string) map[string]ingestManifest {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	out := map[string]ingestManifest{}
	for _, n := range names {
		if strings.HasSuffix(n, ".pending.json") {
			continue
		}
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		var m ingestManifest
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		out[filepath.Base(n)] = m
	}
	return out
}

// committedWindows counts the windows the manifests in dir hold.
func committedWindows(t *testing.T, dir string) int {
	n := 0
	for _, m := range readManifests(t, dir) {
		for _, w := range m.Windows {
			for _, r := range w.Seqs {
				n += int(r[1] - r[0] + 1)
			}
		}
	}
	return n
}

// checkLakeRecord checks that the manifests hold the windows 1..n once
// each, that every data file is in one manifest and exists, and that
// the files' rows are the manifests'.
func checkLakeRecord(t *testing.T, lake, manifests string, n int) {
	t.Helper()
	seen := make([]int, n+1)
	listed := map[string]bool{}
	var rows int64
	for name, m := range readManifests(t, manifests) {
		rows += m.Rows
		for _, w := range m.Windows {
			for _, r := range w.Seqs {
				for s := r[0]; s <= r[1]; s++ {
					if s == 0 || s > uint64(n) {
						t.Fatalf("%s: window %d", name, s)
					}
					seen[s]++
				}
			}
		}
		for _, f := range m.Files {
			if listed[f] {
				t.Errorf("%s in two manifests", f)
			}
			listed[f] = true
		}
	}
	for s := 1; s <= n; s++ {
		if seen[s] != 1 {
			t.Errorf("window %d committed %d times", s, seen[s])
		}
	}
	var fileRows int64
	files, _ := filepath.Glob(filepath.Join(lake, "vehicle=*", "message=*", "date=*", "*"))
	for _, f := range files {
		rel, _ := filepath.Rel(lake, f)
		if !listed[filepath.ToSlash(rel)] {
			t.Errorf("%s is in no manifest", rel)
			continue
		}
		fileRows += parquetRows(t, f)
	}
	if len(files) != len(listed) || fileRows != rows || rows == 0 {
		t.Errorf("%d files hold %d rows; the manifests list %d files of %d rows", len(files), fileRows, len(listed), rows)
	}
}

// parquetRows returns the rows of the Parquet file name.
func parquetRows(t *testing.T, name string) int64 {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return pf.NumRows()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestIngestRefusesClientID: --client-id, which the connection flags
// define for every command, is refused by ingest with exit status 2,
// saying where the client id comes from, rather than taken and not used.
func TestIngestRefusesClientID(t *testing.T) {
	var out bytes.Buffer
	lake := filepath.Join(t.TempDir(), "lake")
	err := run(context.Background(), cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out}, []string{"ingest", "--dbc", yukartDBC,
		"--out-dir", lake, "--broker", "mqtt://127.0.0.1:1", "--client-id", "mine"})
	if code := cli.ExitCode(err); code != 2 || err == nil || !strings.Contains(err.Error(), "--client-id is not taken: the client id is candec-ingest-<--id>") {
		t.Errorf("exit %d, %v; want 2 naming --client-id and where the client id comes from", code, err)
	}
	if _, serr := os.Stat(lake); serr == nil {
		t.Error("the lake was made: the flag was refused too late")
	}
}
