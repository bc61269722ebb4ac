package ingest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/yukart/candec/envelope"
)

// TestResendAfterManyCommits: a window sent again 20 commits after it
// was committed (a car's bridge resending its window in flight after a
// long outage, a new message to the broker) is skipped and counted as a
// duplicate, and so after the instance starts again: what it committed
// is in its record, per vehicle and epoch. A car that restarts (a new
// epoch, seqs from 1 again) is new windows, written; the old epoch's
// are still skipped.
func TestResendAfterManyCommits(t *testing.T) {
	wins := carWindows(t, envelope.JSON)
	const per, commits = 50, 20
	fl := newFakeLake()
	cfg := testConfig(t, "a")
	first := newTestIngest(t, cfg, fl.opened())
	for i := range commits {
		feed(first.core, kartTopic, wins[i*per:(i+1)*per], 1)
		if err := first.core.commit(); err != nil {
			t.Fatal(err)
		}
	}
	feed(first.core, kartTopic, wins[:10], 1) // 20 commits later
	if err := first.core.close(); err != nil {
		t.Fatal(err)
	}
	if c := first.Counters(); c.Duplicates != 10 || c.Windows != per*commits {
		t.Errorf("first run: %d duplicates, %d windows; want 10, %d", c.Duplicates, c.Windows, per*commits)
	}

	restarted := withEpoch(wins, envelope.JSON, testEpoch+1) // the car's next run
	second := newTestIngest(t, cfg, fl.opened())
	feed(second.core, kartTopic, wins[:10], 1)                 // the first commit's
	feed(second.core, kartTopic, wins[per*commits-10:], 100)   // the last commit's, then new ones
	feed(second.core, kartTopic, restarted[:per], 3000)        // a new epoch: seqs 1.. again
	feed(second.core, kartTopic, wins[per*commits/2:][:5], 10) // the old epoch, after the new one
	if err := second.core.close(); err != nil {
		t.Fatal(err)
	}
	newWindows := uint64(len(wins) - per*commits)
	if c := second.Counters(); c.Duplicates != 25 || c.Windows != newWindows+per {
		t.Errorf("after a restart: %d duplicates, %d windows; want 25, %d", c.Duplicates, c.Windows, newWindows+per)
	}
	want := published(t, "kart01", wins)
	for k, v := range published(t, "kart01", restarted[:per]) {
		want[k] = append(want[k], v...)
	}
	sameCells(t, fl.cells(), want)
}

// TestOlderRecordResumes: a record written before the committed
// windows were recorded (manifests without "committed") is read as it
// was: the windows of its latest 8 commits are skipped.
func TestOlderRecordResumes(t *testing.T) {
	wins := carWindows(t, envelope.JSON)
	const per, commits = 50, 12
	fl := newFakeLake()
	cfg := testConfig(t, "a")
	first := newTestIngest(t, cfg, fl.opened())
	for i := range commits {
		feed(first.core, kartTopic, wins[i*per:(i+1)*per], 1)
		if err := first.core.commit(); err != nil {
			t.Fatal(err)
		}
	}
	older := 0
	for _, name := range fl.store.names() {
		if !strings.HasPrefix(name, ManifestDir+"/") {
			continue
		}
		b, _ := fl.store.ReadFile(name, maxManifestBytes)
		var m manifest
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if m.Committed == nil {
			t.Fatalf("%s: no committed windows", name)
		}
		m.Committed = nil
		b, _ = json.Marshal(m)
		if err := fl.store.WriteFile(name, b); err != nil {
			t.Fatal(err)
		}
		older++
	}
	if older != commits {
		t.Fatalf("%d manifests, want %d", older, commits)
	}
	second := newTestIngest(t, cfg, fl.opened())
	feed(second.core, kartTopic, wins[:per*commits], 1)
	if c := second.Counters(); c.Duplicates != 8*per || c.Windows != (commits-8)*per {
		t.Errorf("%d duplicates, %d windows; want the latest 8 commits' %d skipped, %d taken", c.Duplicates, c.Windows, 8*per, (commits-8)*per)
	}
}

// TestCommittedSetBounded: whatever a car sends, what is kept of its
// committed windows stays within maxEpochRanges ranges per epoch and
// maxEpochs epochs, and keeps what matters: a car's one stream is one
// range; a group member's every other seq closes its lowest gaps
// (skipped: the other member wrote them); the epoch added to longest ago
// is the one forgotten.
func TestCommittedSetBounded(t *testing.T) {
	var c committedSet
	c.add(7, [][2]uint64{{1, 1000}}, 0)
	c.add(7, [][2]uint64{{1001, 1872}}, 1)
	if w := c.windows("k"); len(w) != 1 || len(w[0].Seqs) != 1 || w[0].Seqs[0] != [2]uint64{1, 1872} {
		t.Errorf("one stream: %+v, want one range 1..1872", w)
	}
	var g committedSet
	for seq := uint64(1); seq <= 1000; seq += 2 {
		g.add(9, [][2]uint64{{seq, seq}}, seq)
	}
	w := g.windows("k")
	if len(w) != 1 || len(w[0].Seqs) != maxEpochRanges {
		t.Fatalf("every other seq: %d ranges, want %d", len(w[0].Seqs), maxEpochRanges)
	}
	for seq := uint64(1); seq <= 1000; seq++ {
		closed := seq <= w[0].Seqs[0][1]
		if got := g.has(9, seq); got != (seq%2 == 1 || closed) {
			t.Fatalf("seq %d: has %v", seq, got)
		}
	}
	if !g.has(9, 999) || g.has(9, 998) || g.has(9, 1001) {
		t.Error("the latest seqs are kept exactly")
	}
	var e committedSet
	for i := range uint64(maxEpochs + 4) {
		// epochs out of order: a car whose clock went back
		e.add(1000-i*7%13, [][2]uint64{{1, 5}}, i)
	}
	if got := len(e.windows("k")); got > maxEpochs {
		t.Errorf("%d epochs kept, want at most %d", got, maxEpochs)
	}
	last := uint64(1000 - (maxEpochs+3)*7%13)
	if !e.has(last, 3) {
		t.Error("the epoch added last was forgotten")
	}
}

// FuzzCommittedSet: any ranges in any epochs (a hostile car's seqs):
// no panic, the bounds hold, and the ranges added last are kept.
func FuzzCommittedSet(f *testing.F) {
	f.Add([]byte{1, 5, 9, 0, 255, 3, 3, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		var c committedSet
		for i := 0; i+2 < len(b); i += 3 {
			epoch, lo := uint64(b[i]%20), uint64(b[i+1])<<56|uint64(b[i+2])
			hi := lo + uint64(b[i+2]%4)
			if b[i+1] == 255 {
				hi = ^uint64(0)
			}
			c.add(epoch, [][2]uint64{{lo, hi}}, uint64(i))
			if !c.has(epoch, lo) || !c.has(epoch, hi) {
				t.Fatalf("epoch %d: %d..%d just added is not there", epoch, lo, hi)
			}
		}
		if len(c.epochs) > maxEpochs {
			t.Fatalf("%d epochs", len(c.epochs))
		}
		for _, e := range c.epochs {
			r := e.seqs.Ranges()
			if len(r) > maxEpochRanges {
				t.Fatalf("%d ranges", len(r))
			}
			for i := range r {
				if r[i][0] > r[i][1] || i > 0 && r[i][0] <= r[i-1][1]+1 {
					t.Fatalf("ranges %v not sorted, disjoint and apart", r)
				}
			}
		}
	})
}

// TestIdleVehicleRemembered: a vehicle that sends nothing for a run
// keeps its committed windows in that run's manifests (its writer and
// trackers are not made for it): the run after skips its resends.
func TestIdleVehicleRemembered(t *testing.T) {
	wins := carWindows(t, envelope.JSON)
	fl := newFakeLake()
	cfg := testConfig(t, "a")
	run := func(topic string, payloads [][]byte) Counters {
		in := newTestIngest(t, cfg, fl.opened())
		feed(in.core, topic, payloads, 1)
		if err := in.core.close(); err != nil {
			t.Fatal(err)
		}
		return in.Counters()
	}
	run(kartTopic, wins[:100])
	if c := run("fleet/kart02/yukart/window", wins[:100]); len(c.Vehicles) != 1 {
		t.Errorf("the run of kart02 alone made %d vehicles, want 1", len(c.Vehicles))
	}
	if c := run(kartTopic, wins[:150]); c.Duplicates != 100 || c.Windows != 50 {
		t.Errorf("kart01 after a run without it: %d duplicates, %d windows; want 100, 50", c.Duplicates, c.Windows)
	}
}
