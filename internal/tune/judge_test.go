package tune

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/testkit/realdata"
	"github.com/yukart/candec/pipeline"
)

// twinDBC: two value-table states alike but for the factor, 0.1 and 1.
const twinDBC = `VERSION ""
NS_ :
BS_:
BU_: ECU
BO_ 256 M: 8 ECU
 SG_ Tenth : 0|8@1+ (0.1,0) [0|25.5] "" ECU
 SG_ Whole : 8|8@1+ (1,0) [0|255] "" ECU
VAL_ 256 Tenth 0 "A" 1 "B" 2 "C" 3 "D" 7 "Fault" ;
VAL_ 256 Whole 0 "A" 1 "B" 2 "C" 3 "D" 7 "Fault" ;
`

func compile(t testing.TB, name, text string) *dbc.Database {
	t.Helper()
	f, err := dbc.Parse(name, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	db, err := dbc.Compile(f)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// everyValue is the policy that publishes every value.
func everyValue(t testing.TB) *pipeline.PolicyFile {
	t.Helper()
	p, err := pipeline.ParsePolicy("every.yaml", []byte("defaults: {max_rate: 0}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEveryValueTwins: a state of factor 0.1 published at every frame
// loses no transition and has no error, as its factor-1 twin: values
// are compared at the resolution (0.30000000000000004 decoded, 0.3
// published, are one value).
func TestEveryValueTwins(t *testing.T) {
	db := compile(t, "twin.dbc", twinDBC)
	var b strings.Builder
	for i := range 100 {
		v := []int{0, 3, 1, 7, 2}[i%5] // 99 transitions, through 0.3 and 0.7
		fmt.Fprintf(&b, "(%d.%06d) can0 100#%02X%02X\n", 1000+i/100, (i%100)*10000, v, v)
	}
	rep, err := Analyze(source(t, b.String()), Config{DB: db, Policy: everyValue(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Signals {
		f := s.Fidelity
		if f.Transitions != 99 || f.Missed != 0 || f.RMS != 0 || f.Max != 0 {
			t.Errorf("%s: %d of %d transitions missed, RMS %g, max %g; want 0 of 99, no error", s.Name, f.Missed, f.Transitions, f.RMS, f.Max)
		}
	}
	if rep.TotalError != 0 || rep.Missed != 0 || rep.MissedEnum != 0 {
		t.Errorf("total error %g, %d transitions missed (%d enum); want none", rep.TotalError, rep.Missed, rep.MissedEnum)
	}
}

// realCapture is a DBC and a capture of the shared real data, with the
// interface of the capture the DBC is for ("" for all).
type realCapture struct{ dbc, log, iface string }

// realCaptures are the shared RAV4 log's two buses and the three drives.
var realCaptures = []realCapture{
	{"dbc/toyota_new_mc_pt_generated.dbc", "logs/rav4_2017_highway_1min.log", "can0"},
	{"dbc/toyota_adas.dbc", "logs/rav4_2017_highway_1min.log", "can1"},
	{"drives/honda_civic_hatchback_ex_2017_can_generated.dbc", "drives/honda_civictyper_turnonanddrive.log", ""},
	{"drives/nissan_xterra_2011.dbc", "drives/infiniti_g35_aconoff.log", ""},
	{"drives/toyota_new_mc_pt_generated.dbc", "drives/scion_xb_mphlog.log", ""},
}

func (c realCapture) load(t testing.TB, dir string) (*dbc.Database, *Recording) {
	t.Helper()
	db, err := dbc.Load(filepath.Join(dir, c.dbc))
	if err != nil {
		t.Fatal(err)
	}
	return db, recordFile(t, filepath.Join(dir, c.log), db, c.iface)
}

func (c realCapture) name() string {
	name := strings.TrimSuffix(filepath.Base(c.log), ".log")
	if c.iface != "" {
		name += "_" + c.iface
	}
	return name
}

// TestEveryValueRealData: on every real capture with its DBC, the
// policy that publishes every value loses nothing: no error and no
// missed transition on any signal, housekeeping or not.
func TestEveryValueRealData(t *testing.T) {
	dir := realdata.Dir(t)
	for _, c := range realCaptures {
		t.Run(c.name(), func(t *testing.T) {
			db, rec := c.load(t, dir)
			rep, err := AnalyzeRecording(rec, Config{DB: db, Policy: everyValue(t), TopicTemplate: "car/{message}/{signal}"})
			if err != nil {
				t.Fatal(err)
			}
			states := uint64(0)
			for _, s := range rep.Signals {
				states += s.Fidelity.Transitions
				if f := s.Fidelity; f.Missed != 0 || f.RMS != 0 || f.Max != 0 {
					t.Errorf("%s: %d of %d transitions missed, RMS %g, max %g; want none", s.Name, f.Missed, f.Transitions, f.RMS, f.Max)
				}
			}
			if rep.TotalError != 0 || rep.Missed != 0 || rep.Envelopes == 0 || states == 0 {
				t.Errorf("total error %g, %d transitions missed, %d envelopes, %d transitions of states; want no error or loss of some",
					rep.TotalError, rep.Missed, rep.Envelopes, states)
			}
		})
	}
}

// TestSpread: the sample is evenly spaced and deterministic, the robust
// range ignores a glitch, and a signal that moved rarely keeps its full
// range.
func TestSpread(t *testing.T) {
	var s spread
	for i := range 10000 {
		v := float64(i % 100)
		if i == 5000 {
			v = 65535 // one frame's glitch
		}
		s.add(v)
	}
	if len(s.vals) > maxSample || len(s.vals) < maxSample/2 || s.lo != 0 || s.hi != 65535 {
		t.Errorf("sample of %d values, extremes %g…%g", len(s.vals), s.lo, s.hi)
	}
	if got := s.observed(1); got < 95 || got > 99 {
		t.Errorf("robust range %g, want about 98 (the glitch left out)", got)
	}
	var rare spread
	for i := range 10000 {
		rare.add(float64(min(i/9990, 1) * 40)) // 40 on the last 10 values
	}
	if got := rare.observed(0.5); got != 40 {
		t.Errorf("robust range of a signal that moved once: %g, want its full range 40", got)
	}
	var none spread
	if got := none.observed(0.1); got != 0.1 {
		t.Errorf("range of nothing observed: %g, want the resolution 0.1", got)
	}
	var odd spread
	for _, v := range []float64{1, math.NaN(), 3, math.Inf(1), 2} {
		odd.add(v)
	}
	if odd.n != 3 || odd.lo != 1 || odd.hi != 3 {
		t.Errorf("NaN and infinity observed: %d values, %g…%g; want 3, 1…3", odd.n, odd.lo, odd.hi)
	}
}

// TestRangeOfSignal: the DBC's range unless it is beyond the signal's
// bits (the raw full scale given as the physical range) or 1000 times
// what was observed; then the robust observed range.
func TestRangeOfSignal(t *testing.T) {
	// 101 values evenly from lo to hi: the 1st to 99th percentile is
	// 98 % of it.
	obs := func(lo, hi float64) *spread {
		var s spread
		for i := range 101 {
			s.add(lo + (hi-lo)*float64(i)/100)
		}
		return &s
	}
	for _, c := range []struct {
		name           string
		sig            dbc.Signal
		s              *spread
		want           float64
		from, rejected string
	}{
		{"stated", dbc.Signal{Length: 16, Factor: 0.1, Min: 0, Max: 1000}, obs(0, 50), 1000, "dbc", ""},
		{"none", dbc.Signal{Length: 16, Factor: 0.1}, obs(-2, 3), 0.98 * 5, "observed", ""},
		{"raw full scale", dbc.Signal{Length: 16, Signed: true, Factor: 0.01, Min: 0, Max: 65535}, obs(-2, 3), 0.98 * 5, "observed", RangeBeyondBits},
		{"2 bits of 0..255", dbc.Signal{Length: 2, Factor: 1, Min: 0, Max: 255}, obs(0, 3), 0.98 * 3, "observed", RangeBeyondBits},
		{"a little beyond", dbc.Signal{Length: 7, Factor: 1, Min: 0, Max: 200}, obs(0, 100), 200, "dbc", ""},
		{"unsigned raw scale", dbc.Signal{Length: 16, Factor: 1, Min: 0, Max: 65535}, obs(0, 100), 65535, "dbc", ""},
		{"too wide", dbc.Signal{Length: 32, Factor: 0.001, Min: -1e6, Max: 1e6}, obs(0, 1), 0.98, "observed", RangeTooWide},
		{"constant", dbc.Signal{Length: 16, Factor: 1, Min: 0, Max: 65535}, obs(7, 7), 65535, "dbc", ""},
		{"quiet: noise of a step", dbc.Signal{Length: 16, Factor: 0.01, Min: 0, Max: 250}, obs(0, 0.01), 250, "dbc", ""},
		{"too wide, moved 10 steps", dbc.Signal{Length: 32, Factor: 0.1, Min: -1e6, Max: 1e6}, obs(0, 1.1/0.98), 1.1, "observed", RangeTooWide},
		{"float, none", dbc.Signal{Type: dbc.Float32, Length: 32, Factor: 1}, obs(1, 2), 0.98, "observed", ""},
		{"float, constant", dbc.Signal{Type: dbc.Float32, Length: 32, Factor: 1, Min: -1e6, Max: 1e6}, obs(3, 3), 2e6, "dbc", ""},
	} {
		rng, from, rej := rangeOfSignal(&c.sig, c.s)
		if math.Abs(rng-c.want) > 1e-9 || from != c.from || rej != c.rejected {
			t.Errorf("%s: range %g from %q (rejected %q), want %g from %q (%q)", c.name, rng, from, rej, c.want, c.from, c.rejected)
		}
	}
	db := compile(t, "raw.dbc", `VERSION ""
BO_ 1 M: 8 E
 SG_ A : 0|16@1- (0.01,0) [0|65535] "" E
 SG_ B : 16|2@1+ (1,0) [0|255] "" E
 SG_ C : 24|8@1+ (1,0) [0|0] "" E
`)
	if n, of := ImplausibleRanges(db); n != 2 || of != 2 {
		t.Errorf("ImplausibleRanges = %d of %d, want 2 of 2", n, of)
	}
}

// TestHousekeeping: by name (a counter only when it changes on most of
// its frames), or by the steps of a rolling counter; not a ramp, a
// toggle bit or a signed value.
func TestHousekeeping(t *testing.T) {
	steps := func(vals ...uint64) rawSteps {
		var r rawSteps
		for i := 1; i < len(vals); i++ {
			r.add(vals[i-1], vals[i])
		}
		return r
	}
	var roll, ramp, flip, still []uint64
	for i := range 64 {
		roll = append(roll, uint64(i%16))
		ramp = append(ramp, uint64(i))
		flip = append(flip, uint64(i%2))
		still = append(still, uint64(i/40))
	}
	sig := func(name string, bits int, signed bool) *dbc.Signal {
		return &dbc.Signal{Name: name, Length: bits, Signed: signed, Factor: 1}
	}
	for _, c := range []struct {
		name string
		sig  *dbc.Signal
		st   rawSteps
		want string
	}{
		{"CHECKSUM", sig("CHECKSUM", 8, false), steps(still...), HousekeepingName},
		{"COUNTER rolling", sig("COUNTER", 2, false), steps(roll...), HousekeepingName},
		{"a count of faults", sig("voltageDropCounter", 16, false), steps(still...), ""},
		{"unnamed rolling", sig("MSG_SEQ", 4, false), steps(roll...), HousekeepingBehaviour},
		{"a ramp", sig("W", 16, false), steps(ramp...), ""},
		{"a ramp in 8 bits that never wraps", sig("W", 8, false), steps(ramp...), ""},
		{"a toggle bit", sig("T", 1, false), steps(flip...), ""},
		{"signed", sig("S", 4, true), steps(roll...), ""},
		{"a multiplexer cycling its pages", &dbc.Signal{Name: "Group", Length: 4, Factor: 1, Multiplexer: true}, steps(roll...), ""},
		{"too few", sig("F", 4, false), steps(roll[:10]...), ""},
		{"speed", sig("SPEED", 16, false), steps(still...), ""},
	} {
		if got := housekeepingOf(c.sig, c.st); got != c.want {
			t.Errorf("%s: housekeeping %q, want %q", c.name, got, c.want)
		}
	}
}

// TestOptimizeHousekeeping: a checksum and a counter get no budget, say
// so in the policy file, count in no total; --keep brings one back.
func TestOptimizeHousekeeping(t *testing.T) {
	db := compile(t, "hk.dbc", `VERSION ""
BO_ 256 M: 8 E
 SG_ V : 0|16@1+ (0.1,0) [0|1000] "" E
 SG_ CHECKSUM : 16|8@1+ (1,0) [0|255] "" E
 SG_ Seq : 24|4@1+ (1,0) [0|15] "" E
`)
	var b strings.Builder
	for i := range 1000 {
		v := int(5000 + 4000*math.Sin(float64(i)/30))
		fmt.Fprintf(&b, "(%d.%06d) can0 100#%02X%02X%02X%02X\n", 1000+i/100, (i%100)*10000, v&0xff, v>>8, (v*7)&0xff, i%16)
	}
	rec := record(t, "hk", b.String(), db)
	plan := optimize(t, []*Recording{rec}, db, 200, Pins{})
	text := string(plan.PolicyYAML(db))
	for _, name := range []string{"M.CHECKSUM", "M.Seq"} {
		ch := plan.Choices[db.Signals[map[string]int{"M.CHECKSUM": 1, "M.Seq": 2}[name]].Index]
		if ch.Signal != name || ch.Policy.Publish || ch.Housekeeping == "" {
			t.Errorf("%s: %+v, want not published, as housekeeping", name, ch)
		}
		if !strings.Contains(text, "# "+name+": not published; pinned: housekeeping (by ") {
			t.Errorf("the policy file does not say %s is housekeeping:\n%s", name, text)
		}
	}
	if ch := plan.Choices[0]; !ch.Policy.Publish || plan.Worst > 200 || !plan.Met {
		t.Errorf("V: %s; worst %.0f, met %v: want V published within 200", ch.Text, plan.Worst, plan.Met)
	}
	kept := optimize(t, []*Recording{rec}, db, 200, Pins{Keep: []string{"CHECKSUM"}})
	if ch := kept.Choices[1]; !ch.Policy.Publish || ch.Policy.MaxRate != 1 {
		t.Errorf("--keep CHECKSUM: %s, want the default's 1 Hz cap", ch.Text)
	}
	// The report leaves them out of its totals, but shows them.
	rep, err := AnalyzeRecording(rec, Config{DB: db, Policy: everyValue(t)})
	if err != nil {
		t.Fatal(err)
	}
	capped, err := AnalyzeRecording(rec, Config{DB: db, Policy: mustPolicy(t, "defaults: {max_rate: 1}\n")})
	if err != nil {
		t.Fatal(err)
	}
	hk, sum := 0, 0.0
	for _, s := range capped.Signals {
		if s.Housekeeping != "" {
			hk++
			continue
		}
		sum += s.Fidelity.RMSRange
	}
	if hk != 2 || capped.TotalError != sum || capped.TotalError == 0 || rep.TotalError != 0 {
		t.Errorf("%d housekeeping signals shown, total error %g (of the others %g), every value's %g; want 2, equal, not 0, 0",
			hk, capped.TotalError, sum, rep.TotalError)
	}
}

func mustPolicy(t testing.TB, text string) *pipeline.PolicyFile {
	t.Helper()
	p, err := pipeline.ParsePolicy("p.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOptimizeSameCost: on a DBC without cycle times, a message of
// jittered 20 ms frames, one sent twice now and then: the 50 Hz cap saves
// those repeats and lags the early frames; on change saves the same
// repeats and loses nothing, every value costs 0.07 % more and loses
// nothing. A cap never wins at equal cost: not at the least-cost start
// (with a minimum rate of 50 Hz, which the cap meets), nor at the cap's
// own cost.
func TestOptimizeSameCost(t *testing.T) {
	db := compile(t, "nocycle.dbc", `VERSION ""
BO_ 256 M: 8 E
 SG_ V : 0|16@1+ (1,0) [0|65535] "" E
`)
	var b strings.Builder
	for i := range 3000 {
		us := i*20000 + []int{0, 700, -600, 300}[i%4] // jitter under a millisecond
		line := func(us int) {
			fmt.Fprintf(&b, "(%d.%06d) can0 100#%02X%02X\n", 1000+us/1e6, us%1e6, i&0xff, (i>>8)&0xff)
		}
		line(us)
		if i%1000 == 500 {
			line(us + 1000)
		}
	}
	rec := record(t, "jitter", b.String(), db)
	free := optimize(t, []*Recording{rec}, db, 1e6, Pins{})
	cap50, _ := free.uniform("cap 50 Hz")
	rep, err := AnalyzeRecording(rec, Config{DB: db, Policy: everyValue(t)})
	if err != nil {
		t.Fatal(err)
	}
	every := rep.DeliveriesPerS
	if cap50.Error == 0 || cap50.Deliveries >= every {
		t.Fatalf("cap 50 Hz: error %g at %.2f, every value %.2f: want some error, a little cheaper, or the test shows nothing", cap50.Error, cap50.Deliveries, every)
	}
	pinned := optimize(t, []*Recording{rec}, db, 1e6, Pins{MinRate: []RateRule{{"*", 50}}})
	if start := pinned.Curve[0]; start.Error != 0 {
		t.Errorf("least-cost start with 50 Hz pinned: error %g at %.2f; want none (the cap costs the same as every value)", start.Error, start.Deliveries)
	}
	at := optimize(t, []*Recording{rec}, db, cap50.Deliveries, Pins{})
	if !at.Met || at.TotalError != 0 || at.Choices[0].Policy.MaxRate == 50 {
		t.Errorf("at the cap's cost %.2f: %s, error %g, met %v; want no error, not the cap", cap50.Deliveries, at.Choices[0].Text, at.TotalError, at.Met)
	}
}

func (p *Plan) uniform(name string) (Point, bool) {
	for _, u := range p.Uniform {
		if u.Name == name {
			return u, true
		}
	}
	return Point{}, false
}

// TestCurveCountsMissed: every point of the curve counts the enum
// transitions its selection misses (two states: when the optimizer has
// given one of them on change, the other still misses some), and the
// plan's figures are those of a report of the file written.
func TestCurveCountsMissed(t *testing.T) {
	db := compile(t, "two.dbc", `VERSION ""
BO_ 256 M: 8 E
 SG_ V : 0|16@1+ (0.1,0) [0|1000] "" E
 SG_ E : 16|8@1+ (1,0) [0|3] "" E
 SG_ F : 24|8@1+ (1,0) [0|3] "" E
VAL_ 256 E 0 "Off" 1 "On" 2 "Fault" 3 "Limp" ;
VAL_ 256 F 0 "Off" 1 "On" 2 "Fault" 3 "Limp" ;
`)
	var b strings.Builder
	for i := range 1000 {
		v := int(5000 + 4000*math.Sin(float64(i)/30))
		fmt.Fprintf(&b, "(%d.%06d) can0 100#%02X%02X%02X%02X\n", 1000+i/100, (i%100)*10000, v&0xff, v>>8, (i/17)%4, (i/23)%4)
	}
	rec := record(t, "two", b.String(), db)
	plan := optimize(t, []*Recording{rec}, db, 30, Pins{AnyLoss: true})
	if plan.MissedEnum == 0 {
		t.Fatalf("the plan misses no enum transition at 30 deliveries/s: the test shows nothing")
	}
	pol := mustPolicy(t, string(plan.PolicyYAML(db)))
	rep, err := AnalyzeRecording(rec, Config{DB: db, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	if rep.MissedEnum != plan.MissedEnum || !close(rep.TotalError, plan.TotalError) || !close(rep.DeliveriesPerS, plan.Worst) {
		t.Errorf("report of the file: %d missed, error %g at %g; the plan: %d, %g at %g",
			rep.MissedEnum, rep.TotalError, rep.DeliveriesPerS, plan.MissedEnum, plan.TotalError, plan.Worst)
	}
	if len(plan.Curve) < 3 || plan.Curve[0].MissedEnum == 0 || plan.Curve[1].MissedEnum == 0 || plan.Curve[len(plan.Curve)-1].MissedEnum != 0 {
		t.Errorf("curve %+v: want the first two points to miss enum transitions, the last none", plan.Curve)
	}
}

// AnalyzeRecording is Analyze of a capture held in memory.
func AnalyzeRecording(r *Recording, cfg Config) (*Report, error) {
	return analyze(r.source(), cfg, r.obs)
}
