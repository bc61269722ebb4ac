package tune

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/base/numfmt"
	"github.com/yukart/candec/internal/lab/chart"
	"github.com/yukart/candec/internal/lab/chart/charttest"
	"github.com/yukart/candec/internal/testkit/realdata"
	"github.com/yukart/candec/pipeline"
)

// optDBC: a 100 Hz message with a fast number V, a state E and a
// constant C, and a 10 Hz message with a slow number W.
const optDBC = `VERSION ""
NS_ :
BS_:
BU_: ECU
BO_ 256 Fast: 8 ECU
 SG_ V : 0|16@1+ (0.1,0) [0|1000] "" ECU
 SG_ E : 16|8@1+ (1,0) [0|3] "" ECU
 SG_ C : 24|8@1+ (1,0) [0|255] "" ECU
BO_ 512 Slow: 8 ECU
 SG_ W : 0|16@1+ (1,0) [0|1000] "" ECU
VAL_ 256 E 0 "Off" 1 "On" 2 "Fault" 3 "Limp" ;
`

func optDatabase(t testing.TB) *dbc.Database {
	t.Helper()
	f, err := dbc.Parse("opt.dbc", []byte(optDBC))
	if err != nil {
		t.Fatal(err)
	}
	db, err := dbc.Compile(f)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// optCapture is secs seconds of both messages; busy makes V swing and
// E change every 170 ms, otherwise they stay put.
func optCapture(secs int, busy bool) string {
	var b strings.Builder
	for i := range secs * 100 {
		v, e := 100, 0
		if busy {
			v = int(5000 + 4000*math.Sin(float64(i)/30))
			e = (i / 17) % 4
		}
		fmt.Fprintf(&b, "(%d.%06d) can0 100#%02X%02X%02X07\n", 1000+i/100, (i%100)*10000, v&0xff, v>>8, e)
		if i%10 == 0 {
			w := i / 10 % 1000
			fmt.Fprintf(&b, "(%d.%06d) can0 200#%02X%02X\n", 1000+i/100, (i%100)*10000+1, w&0xff, w>>8)
		}
	}
	return b.String()
}

func record(t testing.TB, name, text string, db *dbc.Database) *Recording {
	t.Helper()
	src, err := capture.NewSource(strings.NewReader(text), capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Record(context.Background(), name, src, db)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func optimize(t *testing.T, recs []*Recording, db *dbc.Database, budget float64, pins Pins) *Plan {
	t.Helper()
	plan, err := Optimize(context.Background(), recs, OptimizeConfig{Config: Config{DB: db}, Budget: budget, Pins: pins})
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// TestOptimizeReproduces: the policy file written runs, through the
// same Analyze as `candec tune --policy`, to the deliveries and errors
// the plan predicted, on every capture.
func TestOptimizeReproduces(t *testing.T) {
	db := optDatabase(t)
	recs := []*Recording{record(t, "busy", optCapture(10, true), db), record(t, "quiet", optCapture(10, false), db)}
	plan := optimize(t, recs, db, 300, Pins{})
	if !plan.Met || plan.Worst > 300 {
		t.Fatalf("plan: met %v, worst %.1f deliveries/s; want met within 300", plan.Met, plan.Worst)
	}
	pol, err := pipeline.ParsePolicy("out.yaml", plan.PolicyYAML(db))
	if err != nil {
		t.Fatalf("the policy written does not parse: %v", err)
	}
	for r, text := range []string{optCapture(10, true), optCapture(10, false)} {
		rep, err := Analyze(source(t, text), Config{DB: db, Policy: pol})
		if err != nil {
			t.Fatal(err)
		}
		if !close(rep.DeliveriesPerS, plan.Deliveries[r]) {
			t.Errorf("%s: %.6f deliveries/s, the plan said %.6f", recs[r].Name, rep.DeliveriesPerS, plan.Deliveries[r])
		}
		for _, s := range rep.Signals {
			ch := plan.Choices[slices.IndexFunc(plan.Choices, func(c Choice) bool { return c.Signal == s.Name })]
			if !close(s.EnvelopesPerS*5, ch.Deliveries[r]) {
				t.Errorf("%s %s: %.6f deliveries/s, the plan said %.6f", recs[r].Name, s.Name, s.EnvelopesPerS*5, ch.Deliveries[r])
			}
		}
	}
	// One capture: the plan's error is the report's.
	plan = optimize(t, recs[:1], db, 300, Pins{})
	pol, _ = pipeline.ParsePolicy("out.yaml", plan.PolicyYAML(db))
	rep, err := Analyze(source(t, optCapture(10, true)), Config{DB: db, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	if !close(rep.TotalError, plan.TotalError) || plan.TotalError == 0 {
		t.Errorf("total error %.9g, the plan said %.9g (want equal, not 0)", rep.TotalError, plan.TotalError)
	}
}

func close(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestOptimizeWorstCapture: the budget holds on the worst capture. A
// plan made on the quiet capture alone overruns it on the busy one; the
// plan made on both does not, and spends the budget.
func TestOptimizeWorstCapture(t *testing.T) {
	db := optDatabase(t)
	busy, quiet := record(t, "busy", optCapture(10, true), db), record(t, "quiet", optCapture(10, false), db)
	const budget = 400
	alone := optimize(t, []*Recording{quiet}, db, budget, Pins{})
	pol, _ := pipeline.ParsePolicy("q.yaml", alone.PolicyYAML(db))
	rep, err := AnalyzeRecording(busy, Config{DB: db, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	if rep.DeliveriesPerS <= budget {
		t.Fatalf("the quiet capture's plan costs %.0f on the busy one: want over %d, or this test shows nothing", rep.DeliveriesPerS, budget)
	}
	both := optimize(t, []*Recording{quiet, busy}, db, budget, Pins{})
	if both.Worst > budget || both.Deliveries[1] != both.Worst || both.Worst < 0.8*budget {
		t.Errorf("deliveries %v, worst %.0f: want the busy capture's the worst, within %d and near it", both.Deliveries, both.Worst, budget)
	}
}

// TestOptimizeTooSmall: a budget no policy meets gives the least-cost
// policy, says so, and costs no more than any uniform cap.
func TestOptimizeTooSmall(t *testing.T) {
	db := optDatabase(t)
	plan := optimize(t, []*Recording{record(t, "busy", optCapture(10, true), db)}, db, 1, Pins{})
	if plan.Met {
		t.Fatalf("budget of 1 deliveries/s met at %.1f", plan.Worst)
	}
	if plan.Worst != plan.Curve[0].Deliveries {
		t.Errorf("worst %.2f, want the least-cost start %.2f", plan.Worst, plan.Curve[0].Deliveries)
	}
	if !strings.Contains(string(plan.PolicyYAML(db)), "cannot be met") {
		t.Errorf("the policy file does not say the budget cannot be met")
	}
}

// TestOptimizePins: each pin holds under a budget that presses.
func TestOptimizePins(t *testing.T) {
	db := optDatabase(t)
	recs := []*Recording{record(t, "busy", optCapture(10, true), db)}
	choice := func(p *Plan, name string) Choice {
		return p.Choices[slices.IndexFunc(p.Choices, func(c Choice) bool { return c.Signal == name })]
	}
	plan := optimize(t, recs, db, 600, Pins{Keep: []string{"V"}, MinRate: []RateRule{{"W", 5}}, MaxLag: []LagRule{{"Fast.C", 200 * time.Millisecond}}})
	if got, want := choice(plan, "Fast.V").Policy, pipeline.DefaultPolicy().Resolve(db.Signals[0]); got != want {
		t.Errorf("kept V: %+v, want the base's %+v", got, want)
	}
	if p := choice(plan, "Slow.W").Policy; (p.MaxRate != 0 && p.MaxRate < 5) || (p.OnChange && (p.Heartbeat == 0 || p.Heartbeat > 200*time.Millisecond)) {
		t.Errorf("W with min rate 5 Hz: %s", p.Describe())
	}
	pol, _ := pipeline.ParsePolicy("p.yaml", plan.PolicyYAML(db))
	rep, err := AnalyzeRecording(recs[0], Config{DB: db, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Signals {
		if s.Name == "Fast.C" && s.Fidelity.LagMax > 0.2 {
			t.Errorf("C with max lag 200ms: lag %.3f s", s.Fidelity.LagMax)
		}
		if s.Name == "Fast.E" && s.Fidelity.Missed != 0 {
			t.Errorf("E (value table) lost %d transitions", s.Fidelity.Missed)
		}
	}
	// E on change costs 30 deliveries/s: within 20, only a policy that
	// loses transitions fits.
	loose := optimize(t, recs, db, 20, Pins{AnyLoss: true})
	strict := optimize(t, recs, db, 20, Pins{})
	if strict.MissedEnum != 0 || loose.MissedEnum == 0 {
		t.Errorf("missed enum transitions: %d by default, %d with AnyLoss; want 0 and some (the budget presses)", strict.MissedEnum, loose.MissedEnum)
	}
}

// TestOptimizeBadInput: each is refused with what and where.
func TestOptimizeBadInput(t *testing.T) {
	db := optDatabase(t)
	recs := []*Recording{record(t, "busy", optCapture(2, true), db)}
	for _, tt := range []struct {
		name   string
		recs   []*Recording
		budget float64
		pins   Pins
		is     error
		want   string
	}{
		{"budget 0", recs, 0, Pins{}, ErrConfig, "budget must be a number of deliveries/s more than 0, got 0"},
		{"budget -5", recs, -5, Pins{}, ErrConfig, "got -5"},
		{"budget NaN", recs, math.NaN(), Pins{}, ErrConfig, "got NaN"},
		{"no capture", nil, 100, Pins{}, ErrConfig, "no capture"},
		{"keep nothing", recs, 100, Pins{Keep: []string{"Nope*"}}, ErrPin, `keep: glob "Nope*" matches no signal`},
		{"bad glob", recs, 100, Pins{Transitions: []string{"[a"}}, ErrPin, `transitions: bad glob "[a"`},
		{"min rate 0", recs, 100, Pins{MinRate: []RateRule{{"*", 0}}}, ErrPin, "min rate of \"*\" must be a rate in Hz more than 0, got 0"},
		{"max lag nothing", recs, 100, Pins{MaxLag: []LagRule{{"X", time.Second}}}, ErrPin, `max lag: glob "X" matches no signal`},
	} {
		_, err := Optimize(context.Background(), tt.recs, OptimizeConfig{Config: Config{DB: db}, Budget: tt.budget, Pins: tt.pins})
		if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %v containing %q", tt.name, err, tt.is, tt.want)
		}
	}
	src, _ := capture.NewSource(strings.NewReader("(1.0) can0 7FF#00\n(2.0) can0 7FE#00\n"), capture.Options{})
	if _, err := Record(context.Background(), "other.log", src, db); !errors.Is(err, ErrNoSignal) || !strings.Contains(err.Error(), "other.log (2 frames)") {
		t.Errorf("a capture of no known frame: got %v, want ErrNoSignal naming it", err)
	}
}

// goal checks the goals on a capture: at 22,000 deliveries/s to 5
// subscribers, the optimized error is at most half the best uniform
// cap's at no more cost, below the base policy's, and no enum
// transition is lost.
func goal(t *testing.T, recs []*Recording, cfg Config) {
	t.Helper()
	plan, err := Optimize(context.Background(), recs, OptimizeConfig{Config: cfg, Budget: ComfortableDeliveriesPerS})
	if err != nil {
		t.Fatal(err)
	}
	u, ok := plan.BestUniform()
	if !ok {
		t.Fatal("no uniform cap within the budget")
	}
	at := plan.AtCost(u.Deliveries)
	t.Logf("optimized %.4g at %.0f; uniform %s %.4g at %.0f, optimized there %.4g; base %.4g at %.0f",
		plan.TotalError, plan.Worst, u.Name, u.Error, u.Deliveries, at.Error, plan.Base.Error, plan.Base.Deliveries)
	if !plan.Met || at.Error > u.Error/2 || plan.TotalError >= plan.Base.Error || plan.MissedEnum != 0 {
		t.Errorf("met %v, optimized %.4g at %s's cost (want ≤ half its %.4g), %.4g (want < base %.4g), %d enum transitions missed",
			plan.Met, at.Error, u.Name, u.Error, plan.TotalError, plan.Base.Error, plan.MissedEnum)
	}
	if b := plan.AtCost(plan.Base.Deliveries); b.Error >= plan.Base.Error {
		t.Errorf("at the base policy's cost, optimized %.4g, want below its %.4g", b.Error, plan.Base.Error)
	}
}

func TestGoalIdle(t *testing.T) {
	db, err := dbc.Load("../../testdata/yukart.dbc")
	if err != nil {
		t.Fatal(err)
	}
	goal(t, []*Recording{recordFile(t, "../../testdata/idle.log", db, "")}, Config{DB: db})
}

// TestGoalRAV4: the same on the powertrain bus of the shared RAV4 log.
func TestGoalRAV4(t *testing.T) {
	dir := realdata.Dir(t)
	db, err := dbc.Load(filepath.Join(dir, "dbc", "toyota_new_mc_pt_generated.dbc"))
	if err != nil {
		t.Fatal(err)
	}
	rec := recordFile(t, filepath.Join(dir, "logs", "rav4_2017_highway_1min.log"), db, "can0")
	goal(t, []*Recording{rec}, Config{DB: db, TopicTemplate: "car/{message}/{signal}"})
}

// recordFile records a capture file, only interface iface when given.
func recordFile(t testing.TB, name string, db *dbc.Database, iface string) *Recording {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if iface != "" {
		var keep []string
		for _, l := range strings.SplitAfter(string(data), "\n") {
			if strings.Contains(l, " "+iface+" ") {
				keep = append(keep, l)
			}
		}
		data = []byte(strings.Join(keep, ""))
	}
	return record(t, filepath.Base(name), string(data), db)
}

// TestPlanChart: the error–budget curve names its three policies, the
// plan and the budget, and the per-signal panel both policies.
func TestPlanChart(t *testing.T) {
	db := optDatabase(t)
	plan := optimize(t, []*Recording{record(t, "busy", optCapture(10, true), db)}, db, 300, Pins{})
	c, w, h := plan.Chart()
	var buf bytes.Buffer
	if err := chart.Write(&buf, c, w, h, chart.SVG); err != nil {
		t.Fatal(err)
	}
	charttest.Check(t, buf.Bytes(),
		"Total error against cost, 5 all-signal subscribers",
		"optimized, at every budget",
		"uniform caps (cap 0.2 Hz to cap 50 Hz)",
		fmt.Sprintf("base policy: %.3g at %s", plan.Base.Error, numfmt.Thousands(plan.Base.Deliveries)),
		fmt.Sprintf("the plan: %.3g at %s", plan.TotalError, numfmt.Thousands(plan.Worst)),
		"budget: 300 deliveries/s",
		"Per signal: error against cost, the plan and the base policy",
		"base policy", "the plan",
	)
}

// TestAgree: databases that decode every signal alike agree; a changed
// factor or a missing signal is named, with both databases.
func TestAgree(t *testing.T) {
	a, b := optDatabase(t), optDatabase(t)
	if err := Agree(a, b, "a.dbc", "b.dbc"); err != nil {
		t.Errorf("the same DBC twice: %v", err)
	}
	for _, tt := range []struct {
		name, text, want string
	}{
		{"factor", strings.Replace(optDBC, "(0.1,0)", "(0.01,0)", 1), "Fast.V: ID 0x100"},
		{"missing", strings.Replace(optDBC, " SG_ C : 24|8@1+ (1,0) [0|255] \"\" ECU\n", "", 1), "a.dbc has Fast.C, b.dbc has not"},
	} {
		f, err := dbc.Parse("b.dbc", []byte(tt.text))
		if err != nil {
			t.Fatal(err)
		}
		other, err := dbc.Compile(f)
		if err != nil {
			t.Fatal(err)
		}
		err = Agree(a, other, "a.dbc", "b.dbc")
		if !errors.Is(err, ErrDisagree) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want ErrDisagree containing %q", tt.name, err, tt.want)
		}
	}
}
