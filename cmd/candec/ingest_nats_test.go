package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/yukart/candec/internal/testkit/natstest"
)

// TestIngestJetStreamSIGKILL: two `candec ingest --broker tls://…`
// processes share the partitions of 4 cars on the NATS cluster as
// deploy/nats ships it, while the cars publish over MQTT. One is
// SIGKILLed mid-run: the other takes its partitions over; the killed
// id is started again, as its supervisor would (its start removes what
// its unfinished commit left), and takes its share back. Every window
// of every car is in one manifest once, every data file in one
// manifest, the files' rows the manifests'.
func TestIngestJetStreamSIGKILL(t *testing.T) {
	cars := []string{"kart01", "kart02", "kart03", "kart04"}
	c := natstest.Start(t, natstest.Options{Cars: cars})
	cert, key, err := c.Identity("ingest")
	if err != nil {
		t.Fatal(err)
	}
	lake := filepath.Join(t.TempDir(), "lake")
	args := func(id string) []string {
		return []string{"ingest", "--broker", c.ClientURLs(), "--ca-file", c.CAFile, "--cert-file", cert, "--key-file", key,
			"--dbc", yukartDBC, "--out-dir", lake, "--id", id, "--max-unacked", "100", "--roll-age", "300ms",
			"--pinned-ttl", "5s", "--ack-wait", "20s"}
	}
	pa, ea := startCandec(t, nil, args("a")...)
	pb, eb := startCandec(t, nil, args("b")...)
	waitStderr(t, pa, ea, "consuming a partition", 1)
	waitStderr(t, pb, eb, "consuming a partition", 1)
	wins := testWindows(t)
	var wg sync.WaitGroup
	for i, id := range cars {
		car := natstest.Car(t, c, i%len(c.Nodes), id)
		wg.Go(func() {
			for k, w := range wins {
				if err := car.Publish1("fleet/"+id+"/yukart/window", w); err != nil {
					t.Errorf("%s: %v", id, err)
					return
				}
				if k%100 == 99 {
					time.Sleep(50 * time.Millisecond)
				}
			}
			for deadline := time.Now().Add(4 * promptly); ; time.Sleep(10 * time.Millisecond) {
				if waiting, _ := car.Unacked(); waiting == 0 {
					return
				} else if time.Now().After(deadline) {
					t.Errorf("%s: %d windows unacknowledged", id, waiting)
					return
				}
			}
		})
	}
	manifestsOf := func(id string) []string {
		m, _ := filepath.Glob(filepath.Join(lake, "_candec_ingest", id, "*[0-9].json"))
		return m
	}
	for deadline := time.Now().Add(4 * promptly); len(manifestsOf("a")) < 3; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no 3 commits of a within %v:\n%s", 4*promptly, ea.String())
		}
	}
	sendSignal(t, pa, syscall.SIGKILL)
	exitOf(t, pa, promptly, ea)
	pa, ea = startCandec(t, nil, args("a")...)
	wg.Wait()
	for deadline := time.Now().Add(12 * promptly); natsWindows(t, lake, len(wins)) < len(cars)*len(wins); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d windows committed:\n%s\n%s", natsWindows(t, lake, len(wins)), len(cars)*len(wins), ea.String(), eb.String())
		}
	}
	for _, p := range []struct {
		name string
		ch   func() (int, string)
	}{
		{"a", func() (int, string) {
			select {
			case <-pa.Exited():
				t.Fatalf("exited before the SIGTERM: %v\n%s", pa.Err(), ea.String())
			default:
			}
			sendSignal(t, pa, syscall.SIGTERM)
			return exitOf(t, pa, 2*promptly, ea), ea.String()
		}},
		{"b", func() (int, string) {
			select {
			case <-pb.Exited():
				t.Fatalf("exited before the SIGTERM: %v\n%s", pb.Err(), eb.String())
			default:
			}
			sendSignal(t, pb, syscall.SIGTERM)
			return exitOf(t, pb, 2*promptly, eb), eb.String()
		}},
	} {
		if code, stderr := p.ch(); code != 0 {
			t.Fatalf("%s: exit status %d after SIGTERM\n%s", p.name, code, stderr)
		}
	}
	checkNATSLake(t, lake, cars, len(wins))
	t.Logf("a: %s", lastLine(ea.String()))
	t.Logf("b: %s", lastLine(eb.String()))
}

// natsManifest is what the test reads of a manifest of any instance.
type natsManifest struct {
	Files   []string `json:"files"`
	Rows    int64    `json:"rows"`
	Windows []struct {
		Vehicle string      `json:"vehicle"`
		Seqs    [][2]uint64 `json:"seqs"`
	} `json:"windows"`
}

// natsManifests reads every instance's manifests in lake.
func natsManifests(t *testing.T, lake string) map[string]natsManifest {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(lake, "_candec_ingest", "*", "*.json"))
	out := map[string]natsManifest{}
	for _, n := range names {
		if strings.HasSuffix(n, ".pending.json") {
			continue
		}
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		var m natsManifest
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		out[n] = m
	}
	return out
}

// natsWindows counts the distinct windows (vehicle, seq ≤ n) the
// manifests of lake hold.
func natsWindows(t *testing.T, lake string, n int) int {
	seen := map[string]map[uint64]bool{}
	for _, m := range natsManifests(t, lake) {
		for _, w := range m.Windows {
			if seen[w.Vehicle] == nil {
				seen[w.Vehicle] = map[uint64]bool{}
			}
			for _, r := range w.Seqs {
				for s := r[0]; s <= r[1] && s <= uint64(n); s++ {
					seen[w.Vehicle][s] = true
				}
			}
		}
	}
	k := 0
	for _, s := range seen {
		k += len(s)
	}
	return k
}

// checkNATSLake checks that the manifests of every instance hold each
// car's windows 1..n once each, that every data file is in one manifest
// and exists, and that the files' rows are the manifests'.
func checkNATSLake(t *testing.T, lake string, cars []string, n int) {
	t.Helper()
	seen := map[string][]int{}
	for _, id := range cars {
		seen[id] = make([]int, n+1)
	}
	listed := map[string]bool{}
	var rows int64
	for name, m := range natsManifests(t, lake) {
		rows += m.Rows
		for _, w := range m.Windows {
			for _, r := range w.Seqs {
				for s := r[0]; s <= r[1]; s++ {
					if seen[w.Vehicle] == nil || s == 0 || s > uint64(n) {
						t.Fatalf("%s: window %s %d", name, w.Vehicle, s)
					}
					seen[w.Vehicle][s]++
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
	for id, counts := range seen {
		for s := 1; s <= n; s++ {
			if counts[s] != 1 {
				t.Errorf("%s window %d committed %d times", id, s, counts[s])
			}
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
