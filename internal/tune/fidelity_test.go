package tune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/pipeline"
)

// fidDBC has a plain 8-bit number V (range 0–100) and a state E with a
// value table, in one message without a cycle time.
const fidDBC = `VERSION ""
NS_ :
BS_:
BU_: ECU
BO_ 256 Msg: 8 ECU
 SG_ V : 0|8@1+ (1,0) [0|100] "" ECU
 SG_ E : 8|8@1+ (1,0) [0|3] "" ECU
VAL_ 256 E 0 "Off" 1 "On" 2 "Fault" 3 "Limp" ;
`

// step is one frame: at seconds after 20,000 s, V and E.
type step struct {
	at   float64
	v, e int
}

// fidCapture writes the steps as frames.
func fidCapture(steps []step) string {
	var b strings.Builder
	for _, s := range steps {
		us := 20000_000000 + int64(math.Round(s.at*1e6))
		fmt.Fprintf(&b, "(%d.%06d) can0 100#%02X%02X\n", us/1e6, us%1e6, s.v, s.e)
	}
	return b.String()
}

// every returns frames every 100 ms from a to b seconds (inclusive)
// with V and E given by f.
func every(a, b float64, f func(at float64) (v, e int)) []step {
	var out []step
	for i := int(math.Round(a * 10)); i <= int(math.Round(b*10)); i++ {
		at := float64(i) / 10
		v, e := f(at)
		out = append(out, step{at, v, e})
	}
	return out
}

func fidDatabase(t *testing.T) *dbc.Database {
	t.Helper()
	f, err := dbc.Parse("fid.dbc", []byte(fidDBC))
	if err != nil {
		t.Fatal(err)
	}
	db, err := dbc.Compile(f)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestFidelity: figures worked out by hand from the policy's rules.
func TestFidelity(t *testing.T) {
	tests := []struct {
		name, policy string
		steps        []step
		sig          string
		want         Fidelity
	}{{
		// Every value is published: nothing is lost, nothing waits.
		name: "every value", policy: "defaults: {}\n", sig: "V",
		steps: every(0, 2, func(at float64) (int, int) { return int(at * 10), 0 }),
		want:  Fidelity{Range: 100, RangeFrom: "dbc", Changes: 20, State: true, Transitions: 20},
	}, {
		// 1 Hz cap: V goes 0 → 50 at 0.5 s and is published at 1.0 s;
		// it is wrong by 50 for 0.5 s of 2 s: RMS √(50²·0.5/2) = 25.
		name: "cap", policy: "defaults:\n  max_rate: 1\n", sig: "V",
		steps: every(0, 2, func(at float64) (int, int) { return 50 * b2i(at >= 0.5), 0 }),
		want: Fidelity{RMS: 25, Max: 50, Range: 100, RangeFrom: "dbc", RMSRange: 0.25, MaxRange: 0.5, RMSRes: 25, MaxRes: 50,
			Changes: 1, LagP50: 0.5, LagP99: 0.5, LagMax: 0.5, State: true, Transitions: 1},
	}, {
		// 1 Hz cap: E is On from 0.3 to 0.4 s only, and no envelope
		// carries it: one transition of two missed; wrong by 1 for 0.1 s
		// of 1 s. The change was undone before a publish: no lag.
		name: "missed", policy: "defaults:\n  max_rate: 1\n", sig: "E",
		steps: every(0, 1, func(at float64) (int, int) { return 0, b2i(at > 0.25 && at < 0.35) }),
		want: Fidelity{RMS: math.Sqrt(0.1), Max: 1, Range: 3, RangeFrom: "dbc", RMSRange: math.Sqrt(0.1) / 3, MaxRange: 1.0 / 3,
			RMSRes: math.Sqrt(0.1), MaxRes: 1, State: true, Transitions: 2, Missed: 1},
	}, {
		// On change ±5: 3 at 0.1 s is within the deadband (wrong by 3
		// for 0.1 s of 1 s, and a transition missed), 8 at 0.2 s is
		// published at once.
		name: "deadband", policy: "defaults:\n  on_change: true\n  deadband: 5\n", sig: "V",
		steps: every(0, 1, func(at float64) (int, int) {
			return []int{0, 3, 8, 8, 8, 8, 8, 8, 8, 8, 8}[int(math.Round(at*10))], 0
		}),
		want: Fidelity{RMS: math.Sqrt(0.9), Max: 3, Range: 100, RangeFrom: "dbc", RMSRange: math.Sqrt(0.9) / 100, MaxRange: 0.03,
			RMSRes: math.Sqrt(0.9), MaxRes: 3, Changes: 1, State: true, Transitions: 2, Missed: 1},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fidelityOf(t, tt.policy, fidCapture(tt.steps), tt.sig)
			checkFidelity(t, got, tt.want)
		})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// fidelityOf runs capture under policy and returns signal sig's figures.
func fidelityOf(t *testing.T, policy, capture, sig string) Fidelity {
	t.Helper()
	pol, err := pipeline.ParsePolicy("p.yaml", []byte(policy))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Analyze(source(t, capture), Config{DB: fidDatabase(t), Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Signals {
		if s.Name == "Msg."+sig {
			return s.Fidelity
		}
	}
	t.Fatalf("no signal %s in %+v", sig, rep.Signals)
	return Fidelity{}
}

// checkFidelity compares every figure, lags within the histogram's
// resolution.
func checkFidelity(t *testing.T, got, want Fidelity) {
	t.Helper()
	near := func(what string, g, w, tol float64) {
		t.Helper()
		if math.Abs(g-w) > tol*math.Max(1, math.Abs(w)) {
			t.Errorf("%s: got %.6g, want %.6g", what, g, w)
		}
	}
	near("RMS", got.RMS, want.RMS, 1e-9)
	near("Max", got.Max, want.Max, 1e-9)
	near("Range", got.Range, want.Range, 1e-9)
	near("RMSRange", got.RMSRange, want.RMSRange, 1e-9)
	near("MaxRange", got.MaxRange, want.MaxRange, 1e-9)
	near("RMSRes", got.RMSRes, want.RMSRes, 1e-9)
	near("MaxRes", got.MaxRes, want.MaxRes, 1e-9)
	near("LagP50", got.LagP50, want.LagP50, 0.01)
	near("LagP99", got.LagP99, want.LagP99, 0.01)
	near("LagMax", got.LagMax, want.LagMax, 1e-9)
	if got.RangeFrom != want.RangeFrom || got.Changes != want.Changes || got.State != want.State ||
		got.Transitions != want.Transitions || got.Missed != want.Missed {
		t.Errorf("got range from %s, %d changes, state %v, %d transitions, %d missed; want %s, %d, %v, %d, %d",
			got.RangeFrom, got.Changes, got.State, got.Transitions, got.Missed,
			want.RangeFrom, want.Changes, want.State, want.Transitions, want.Missed)
	}
}

// FuzzFidelity: on any run of values, under any of a few policies, the
// figures hold together: 0 ≤ RMS ≤ Max ≤ the observed spread, missed ≤
// transitions, lags ordered; publishing every value loses nothing.
func FuzzFidelity(f *testing.F) {
	f.Add([]byte{0, 5, 5, 9, 0, 1, 1, 200}, uint8(1))
	f.Add([]byte{3, 3, 3, 250, 3, 3, 17}, uint8(2))
	policies := []string{"defaults: {}\n", "defaults:\n  max_rate: 2\n", "defaults:\n  on_change: true\n  deadband: 10\n",
		"defaults:\n  max_rate: 5\n  on_change: true\n  heartbeat: 300ms\n"}
	f.Fuzz(func(t *testing.T, vals []byte, p uint8) {
		if len(vals) == 0 || len(vals) > 500 {
			return
		}
		var steps []step
		lo, hi := 255, 0
		for i, v := range vals {
			steps = append(steps, step{float64(i) / 10, int(v), int(v) % 4})
			lo, hi = min(lo, int(v)), max(hi, int(v))
		}
		policy := policies[int(p)%len(policies)]
		got := fidelityOf(t, policy, fidCapture(steps), "V")
		if got.RMS < 0 || got.RMS > got.Max+1e-9 || got.Max > float64(hi-lo) {
			t.Errorf("%s: RMS %g, max %g, spread %d: want 0 ≤ RMS ≤ max ≤ spread", policy, got.RMS, got.Max, hi-lo)
		}
		if got.Missed > got.Transitions || got.LagP50 > got.LagP99+1e-9 || got.LagP99 > got.LagMax*1.01 {
			t.Errorf("%s: %+v: missed > transitions or lags out of order", policy, got)
		}
		if policy == policies[0] && (got.Max != 0 || got.Missed != 0 || got.LagMax != 0) {
			t.Errorf("every value: %+v, want no error, no miss, no lag", got)
		}
	})
}

// TestFidelityReceived: the fidelity of what a subscriber received, as
// Config.Received, is the run's own when it received the run's
// envelopes; a changed value changes it, and a lost envelope is an
// error naming the topic.
func TestFidelityReceived(t *testing.T) {
	db := fidDatabase(t)
	policy := "defaults:\n  max_rate: 1\n"
	capt := fidCapture(every(0, 2, func(at float64) (int, int) { return 50 * b2i(at >= 0.5), 0 }))
	pol, err := pipeline.ParsePolicy("p.yaml", []byte(policy))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]envelope.Envelope{}
	eng, err := pipeline.New(db, pipeline.Config{Policies: pol}, pipeline.SinkFunc(func(o *pipeline.Out) {
		got[o.Topic] = append(got[o.Topic], envelope.Envelope{Kind: o.Env.Kind, Int: o.Env.Int, Uint: o.Env.Uint, Float: o.Env.Float, TS: o.Env.TS, Seq: o.Env.Seq})
	}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.RunOffline(context.Background(), source(t, capt), eng, pipeline.OfflineOptions{}); err != nil {
		t.Fatal(err)
	}
	run := func(recv map[string][]envelope.Envelope) (*Report, error) {
		return Analyze(source(t, capt), Config{DB: db, Policy: pol, Received: recv})
	}
	own, err := run(nil)
	if err != nil {
		t.Fatal(err)
	}
	same, err := run(got)
	if err != nil || same.Signals[0].Fidelity != own.Signals[0].Fidelity || same.TotalError != own.TotalError {
		t.Fatalf("received the run's envelopes: %v, %+v; want %+v", err, same.Signals[0].Fidelity, own.Signals[0].Fidelity)
	}
	const topic = "yukart/vehicle/V"
	got[topic][1].Int = 40 // V published as 40, not 50, at 1.0 s
	changed, err := run(got)
	if err != nil || changed.TotalError <= own.TotalError {
		t.Errorf("a wrong value received: %v, total error %g, want more than %g", err, changed.TotalError, own.TotalError)
	}
	got[topic] = got[topic][:len(got[topic])-1]
	if _, err := run(got); !errors.Is(err, ErrReceived) || !strings.Contains(err.Error(), topic) {
		t.Errorf("an envelope lost: %v, want ErrReceived naming %s", err, topic)
	}
}

// TestFidelityJoined: captures joined with time going back 3 h, or on
// 3 h, are one discontinuity each; the step is no time, and the frames
// the clock guard held to confirm the new timebase count, so the figures
// are those of either part alone (and one transition more: V goes back
// from 50 to 0 where the parts meet).
func TestFidelityJoined(t *testing.T) {
	steps := every(0, 10, func(at float64) (int, int) { return 50 * b2i(at >= 0.5), 0 })
	single := fidelityOf(t, "defaults:\n  max_rate: 1\n", fidCapture(steps), "V")
	for _, shift := range []float64{-3 * 3600, 3 * 3600} {
		joined := append(append([]step(nil), steps...), shifted(steps, shift)...)
		got := fidelityOf(t, "defaults:\n  max_rate: 1\n", fidCapture(joined), "V")
		if math.Abs(got.RMS-single.RMS) > 1e-9 || got.Max != single.Max || got.LagMax != single.LagMax || got.Transitions != 2*single.Transitions+1 {
			t.Errorf("joined %+g s: RMS %g, max %g, lag max %g, %d transitions; either part alone: %g, %g, %g, %d",
				shift, got.RMS, got.Max, got.LagMax, got.Transitions, single.RMS, single.Max, single.LagMax, single.Transitions)
		}
	}
}

func shifted(steps []step, by float64) []step {
	out := make([]step, len(steps))
	for i, s := range steps {
		out[i] = step{s.at + by, s.v, s.e}
	}
	return out
}
