package fleet

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/yukart/candec/campaign"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/internal/testkit/natstest"
)

// campaignPolicy caps every signal at one value a second, against the
// default policy's twenty: a difference no chance makes.
const campaignPolicy = "defaults:\n  max_rate: 1\n"

// TestRunCampaign runs five cars through a real mosquitto into an
// ingest and pushes a signed campaign for three of them mid-run, as
// `candec campaign push` does: those three take it from their policy
// topic, verify it and switch at once, every seq going on; their
// windows after the switch carry the campaign's version and far fewer
// values, in the cars' record and in the lake's policy_version column;
// the other two never change. Nothing is lost or committed twice.
func TestRunCampaign(t *testing.T) {
	if testing.Short() {
		t.Skip("builds candec and starts mosquitto and an ingest")
	}
	brokertest.RequireMosquitto(t)
	runCampaign(t, Config{Warmup: time.Second})
}

// TestRunNATSCampaign is TestRunCampaign on the 3-node NATS cluster of
// deploy/nats: the cars, each with its certificate, subscribe to their
// own policy topic (accounts.conf), the campaigns user pushes the
// campaign, retained, through one node, and the cars, spread over the
// three, take it; the ingest reads the stream, which holds the windows
// only (the pushes are not among them: nothing lost, nothing twice).
func TestRunNATSCampaign(t *testing.T) {
	if testing.Short() {
		t.Skip("builds candec and starts a NATS cluster and an ingest")
	}
	// The ingest's consumers start about 1.5 s after it connects.
	runCampaign(t, Config{Warmup: 4 * time.Second, Engine: EngineNATS,
		NATS: NATSConfig{Binary: natstest.Binary(t), ConfigDir: natstest.ConfigDir(t)}})
}

// runCampaign runs five cars for a 4 s window after base's warm-up,
// through base's engine into an ingest, pushes a campaign for three of
// them 2 s into the window, and checks the cars, the lake and the
// result.
func runCampaign(t *testing.T, base Config) {
	t.Helper()
	exe := buildCandec(t)
	const window, at = 4 * time.Second, 2 * time.Second
	warmup := base.Warmup
	dbcPath, err := filepath.Abs("../../testdata/yukart.dbc")
	if err != nil {
		t.Fatal(err)
	}
	cc := testCampaign(t, dbcPath, "car0000[0-2]")
	cc.At = at
	cfg := liveConfig(t, warmup+window)
	cfg.Start = time.Now().UnixNano()
	cfg.LiveFrom = warmup + at/2
	cfg.Live = func(id string) bool { return strings.HasPrefix(id, "car0000") && id <= "car00002" }
	cars := make([]Car, 5)
	for i := range cars {
		if cars[i], err = NewCar(cfg, i); err != nil {
			t.Fatal(err)
		}
	}
	made := cfg
	made.Live = nil
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	run := base
	run.Exe, run.DBC, run.Cars, run.Ingests, run.Duration = exe, dbcPath, cars, 1, window
	run.Dir, run.RollAge, run.Campaign = dir, 500*time.Millisecond, cc
	res, err := Run(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if res.PublishedWindows != res.CommittedWindows || res.Lost != 0 || res.Duplicates != 0 {
		t.Errorf("published %d, committed %d, lost %d, duplicates %d; want all committed once",
			res.PublishedWindows, res.CommittedWindows, res.Lost, res.Duplicates)
	}
	c := res.Campaign
	if c == nil || c.Pushed != 3 || c.Applied != 3 || len(c.Refused) != 0 {
		t.Fatalf("campaign: %+v; want pushed to 3, applied by 3, refused by none", c)
	}
	for i := range cars {
		old, err := NewCar(made, i)
		if err != nil {
			t.Fatal(err)
		}
		checkCar(t, &cars[i], old.Windows, i < 3)
	}
	checkVersions(t, c.Versions)
	checkLake(t, filepath.Join(dir, "lake"))
	var b strings.Builder
	WriteTable(&b, &Record{Result: *res, Window: 10 * time.Millisecond})
	t.Log("\n" + b.String())
}

// testCampaign signs a campaign of campaignPolicy for vehicles, version
// 7, for the DBC file dbcPath.
func testCampaign(t *testing.T, dbcPath, vehicles string) *Campaign {
	t.Helper()
	privPEM, pubPEM, err := campaign.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	priv, err := campaign.ParsePrivateKey(privPEM)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := campaign.ParsePublicKey(pubPEM)
	if err != nil {
		t.Fatal(err)
	}
	var files dbc.BusFiles
	if err := files.Set(dbcPath); err != nil {
		t.Fatal(err)
	}
	hash, err := files.Hash(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	payload, err := campaign.Sign(priv, campaign.Body{Version: 7, Vehicles: vehicles, DBC: hash,
		NotBefore: time.Now().Add(-time.Minute), Policy: campaignPolicy})
	if err != nil {
		t.Fatal(err)
	}
	return &Campaign{Payload: payload, Key: pub, DBC: hash}
}

// checkCar checks one car's windows after the run against the drive it
// would have made without a campaign: a car the campaign is for
// switched once (checkSwitch); the others are unchanged.
func checkCar(t *testing.T, c *Car, old []Window, matched bool) {
	t.Helper()
	if !matched {
		for i, w := range c.Windows {
			if w.Policy != 0 || !bytes.Equal(w.Payload, old[i].Payload) {
				t.Fatalf("car %s (not matched): window %d changed: %s, want %s", c.ID, i, w.Payload, old[i].Payload)
			}
		}
		return
	}
	cut := time.Duration(-1)
	for _, w := range c.Windows {
		if w.Policy == 7 {
			break
		}
		cut = w.At
	}
	if cut < 0 || cut == c.Windows[len(c.Windows)-1].At {
		t.Fatalf("car %s: no window of version 7", c.ID)
	}
	checkSwitch(t, c.Windows, old, cut, 7)
}

// checkVersions checks the lake's windows by version: five cars ran
// version 0 before the push, two after it, three ran version 7 after
// their switch, each at far fewer values a second.
func checkVersions(t *testing.T, vs []VersionFigures) {
	t.Helper()
	if len(vs) != 3 {
		t.Fatalf("versions: %+v; want three rows", vs)
	}
	b, a0, a7 := vs[0], vs[1], vs[2]
	if b.After || b.Version != 0 || b.Cars != 5 || !a0.After || a0.Version != 0 || a0.Cars != 2 ||
		!a7.After || a7.Version != 7 || a7.Cars != 3 {
		t.Fatalf("versions: %+v; want before 0 (5 cars), after 0 (2 cars), after 7 (3 cars)", vs)
	}
	before, other, after := b.PerCarSecond(b.Values), a0.PerCarSecond(a0.Values), a7.PerCarSecond(a7.Values)
	if after*3 > before || other*2 < before || other > before*2 {
		t.Errorf("values a second a car: %.1f before, %.1f after for the others, %.1f after version 7", before, other, after)
	}
}

// checkLake reads the lake's policy_version column: the matched cars'
// rows are of versions 0 and 7, the others' of 0 only, and a matched
// car's rows come far less often under version 7.
func checkLake(t *testing.T, lake string) {
	t.Helper()
	type span struct {
		rows     int
		min, max int64
	}
	got := map[string]map[int64]*span{} // vehicle → version → rows
	err := filepath.WalkDir(lake, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") {
			return err
		}
		vehicle := ""
		for _, part := range strings.Split(filepath.ToSlash(p), "/") {
			if v, ok := strings.CutPrefix(part, "vehicle="); ok {
				vehicle = v
			}
		}
		if got[vehicle] == nil {
			got[vehicle] = map[int64]*span{}
		}
		return readPolicyRows(p, func(ts, version int64) {
			s := got[vehicle][version]
			if s == nil {
				s = &span{min: ts, max: ts}
				got[vehicle][version] = s
			}
			s.rows++
			s.min, s.max = min(s.min, ts), max(s.max, ts)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"car00000", "car00001", "car00002", "car00003", "car00004"} {
		vs := got[v]
		matched := v <= "car00002"
		if vs[0] == nil || (vs[7] != nil) != matched || len(vs) != map[bool]int{true: 2, false: 1}[matched] {
			t.Errorf("lake: vehicle %s has rows of versions %v; matched %v", v, keys(vs), matched)
			continue
		}
		if matched {
			rate := func(s *span) float64 { return float64(s.rows) / (float64(s.max-s.min) / 1e9) }
			if rate(vs[7])*3 > rate(vs[0]) {
				t.Errorf("lake: vehicle %s: %.1f rows a second under version 7, %.1f under 0", v, rate(vs[7]), rate(vs[0]))
			}
		}
	}
}

func keys[V any](m map[int64]V) []int64 {
	var out []int64
	for k := range m {
		out = append(out, k)
	}
	return out
}

// readPolicyRows calls add with each row's time and policy_version.
func readPolicyRows(name string, add func(ts, version int64)) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return err
	}
	cols := map[string]int{}
	for i, c := range pf.Schema().Columns() {
		cols[c[0]] = i
	}
	ti, ok1 := cols["time"]
	pi, ok2 := cols["policy_version"]
	if !ok1 || !ok2 {
		return &os.PathError{Op: "read", Path: name, Err: os.ErrInvalid}
	}
	r := parquet.NewReader(pf)
	buf := make([]parquet.Row, 64)
	for {
		n, err := r.ReadRows(buf)
		for _, row := range buf[:n] {
			var ts, version int64
			for _, v := range row {
				switch v.Column() {
				case ti:
					ts = v.Int64()
				case pi:
					version = v.Int64()
				}
			}
			add(ts, version)
		}
		if err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}
