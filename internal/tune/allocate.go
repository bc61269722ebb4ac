package tune

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/pipeline"
)

// buildTable resolves the base policy, makes every candidate's policy
// file, runs them all over the recordings and marks what the pins allow.
func buildTable(ctx context.Context, recs []*Recording, cfg OptimizeConfig) (*table, error) {
	db := cfg.DB
	n := len(db.Signals)
	base := make([]pipeline.Policy, n)
	for _, s := range db.Signals {
		base[s.Index] = cfg.Policy.Resolve(s)
	}
	tb := &table{nrec: len(recs), pols: [][]pipeline.Policy{base}, ok: make([][]bool, n), pins: make([][]string, n), hk: make([]string, n)}
	for _, s := range db.Signals {
		tb.hk[s.Index] = housekeepingIn(s, recs)
	}
	lim := limitsOf(db, cfg.Pins, base, tb.hk)
	rng := make([]float64, n)
	for _, s := range db.Signals {
		rng[s.Index] = rangeOf(s, recs)
	}
	files := []*pipeline.PolicyFile{cfg.Policy}
	for _, c := range ladder {
		pols := make([]pipeline.Policy, n)
		for _, s := range db.Signals {
			k := s.Index
			pols[k] = base[k]
			if !lim[k].kept {
				pols[k] = c.policyOf(base[k], rng[k], lim[k].hz)
			}
		}
		f, err := policyFile("candidate", policyYAML(db, pols, nil, ""))
		if err != nil {
			return nil, err
		}
		tb.pols = append(tb.pols, pols)
		files = append(files, f)
	}
	passes, err := runPasses(ctx, recs, files, cfg.Config, cfg.Jobs)
	if err != nil {
		return nil, err
	}
	tb.passes = append(passes, tb.offPass(n))
	tb.meanErrors(n)
	for k := range n {
		tb.ok[k], tb.pins[k] = tb.allowed(k, lim[k])
	}
	return tb, nil
}

// offPass adds the candidate that does not publish, given to
// housekeeping signals: nothing published, nothing to measure, so it is
// not run.
func (tb *table) offPass(n int) pass {
	tb.off = len(tb.pols)
	tb.pols = append(tb.pols, make([]pipeline.Policy, n))
	var p pass
	for range tb.nrec {
		p.envPerS = append(p.envPerS, make([]float64, n))
		p.fid = append(p.fid, make([]Fidelity, n))
	}
	return p
}

// limit is what the pins ask of one signal.
type limit struct {
	hk      string // housekeeping (housekeepingOf), and not kept
	kept    bool
	hz      float64       // minimum rate, 0 for none
	lag     time.Duration // maximum change lag, 0 for none
	protect bool          // no transition may be lost
}

func limitsOf(db *dbc.Database, p Pins, base []pipeline.Policy, hk []string) []limit {
	lim := make([]limit, len(db.Signals))
	for _, s := range db.Signals {
		l := &lim[s.Index]
		l.kept = !base[s.Index].Publish || slices.ContainsFunc(p.Keep, func(g string) bool { return globMatch(g, s) })
		if !l.kept {
			l.hk = hk[s.Index]
		}
		for _, r := range p.MinRate {
			if globMatch(r.Glob, s) {
				l.hz = max(l.hz, r.Hz)
			}
		}
		for _, r := range p.MaxLag {
			if globMatch(r.Glob, s) && (l.lag == 0 || r.Max < l.lag) {
				l.lag = r.Max
			}
		}
		switch {
		case p.AnyLoss:
		case p.Transitions == nil:
			l.protect = len(s.Values) > 0
		default:
			l.protect = slices.ContainsFunc(p.Transitions, func(g string) bool { return globMatch(g, s) })
		}
	}
	return lim
}

// allowed says which candidates signal k may have, and names its pins.
// Every value (candidate 1) meets every pin but keep; a housekeeping
// signal not kept has only the candidate that does not publish it.
func (tb *table) allowed(k int, l limit) ([]bool, []string) {
	ok := make([]bool, len(tb.pols))
	var pins []string
	switch {
	case l.kept:
		ok[0] = true
		return ok, []string{"kept as written"}
	case l.hk != "":
		ok[tb.off] = true
		return ok, []string{"housekeeping (by " + l.hk + "): not published, --keep brings it back"}
	}
	if l.hz > 0 {
		pins = append(pins, fmt.Sprintf("min rate %g Hz", l.hz))
	}
	if l.lag > 0 {
		pins = append(pins, fmt.Sprintf("max lag %s", l.lag))
	}
	if l.protect {
		pins = append(pins, "no transition lost")
	}
	for c := range tb.off {
		p := tb.pols[c][k]
		ok[c] = c == 1 || (l.hz == 0 || ((p.MaxRate == 0 || p.MaxRate >= l.hz) &&
			(!p.OnChange || (p.Heartbeat > 0 && p.Heartbeat.Seconds() <= 1/l.hz))))
		for r := 0; r < tb.nrec && ok[c] && c != 1; r++ {
			f := &tb.passes[c].fid[r][k]
			if (l.lag > 0 && f.LagMax > l.lag.Seconds()) || (l.protect && f.Missed > 0) {
				ok[c] = false
			}
		}
	}
	return ok, pins
}

// cost is signal k's deliveries per second under candidate c on
// recording r.
func (tb *table) cost(k, c, r int, subs int) float64 {
	return tb.passes[c].envPerS[r][k] * float64(subs)
}

// errOf is signal k's mean error under candidate c.
func (tb *table) errOf(k, c int) float64 { return tb.errs[k][c] }

// meanErrors fills tb.errs: each signal's mean error under each
// candidate, over the recordings.
func (tb *table) meanErrors(n int) {
	tb.errs = make([][]float64, n)
	for k := range n {
		tb.errs[k] = make([]float64, len(tb.pols))
		for c := range tb.pols {
			for r := range tb.nrec {
				tb.errs[k][c] += tb.passes[c].fid[r][k].RMSRange
			}
			tb.errs[k][c] /= float64(tb.nrec)
		}
	}
}

// totals are the deliveries per second of selection sel per recording.
func (tb *table) totals(sel []int, subs int) []float64 {
	tot := make([]float64, tb.nrec)
	for k, c := range sel {
		for r := range tot {
			tot[r] += tb.cost(k, c, r, subs)
		}
	}
	return tot
}

// sameCost is how much more, as a fraction, a candidate may cost than
// the cheapest and still count as costing the same: a cap at the
// message's own rate saves an envelope now and then (two jittered
// frames in one window) at the price of lag, so that every value or on
// change costs a hair more and loses nothing.
const sameCost = 1e-3

// leastCost is the allowed candidate of signal k whose worst recording
// costs least; of those within slack (a fraction) of the least cost, the
// one with the least error, then the cheapest, then the base policy.
func (tb *table) leastCost(k, subs int, slack float64) int {
	worst := make([]float64, len(tb.pols))
	least := math.Inf(1)
	for c := range tb.pols {
		if tb.ok[k][c] {
			for r := range tb.nrec {
				worst[c] = max(worst[c], tb.cost(k, c, r, subs))
			}
			least = min(least, worst[c])
		}
	}
	best := -1
	for c := range tb.pols {
		if !tb.ok[k][c] || worst[c] > least*(1+slack)+1e-12 {
			continue
		}
		e, be := tb.errOf(k, c), 0.0
		if best >= 0 {
			be = tb.errOf(k, best)
		}
		if best < 0 || e < be-1e-15 || (e <= be+1e-15 && worst[c] < worst[best]-1e-12) {
			best = c
		}
	}
	return best
}

// allocate starts every signal at its least-cost allowed candidate and
// then, while a change fits the budget, makes the change that lowers the
// total error most per delivery per second it adds to the worst
// recording. It returns the selection and whether the least-cost start
// met the budget; with curve, each step's point is appended to it.
func (tb *table) allocate(cfg OptimizeConfig, budget float64, curve *[]Point) ([]int, bool) {
	subs := cfg.Subscribers
	sel := make([]int, len(tb.ok))
	for k := range sel {
		sel[k] = tb.leastCost(k, subs, sameCost)
	}
	tot := tb.totals(sel, subs)
	worst := slices.Max(tot)
	if worst > budget {
		// Costing the same is not costing the same when the budget is
		// that tight: the strictly cheapest.
		for k := range sel {
			sel[k] = tb.leastCost(k, subs, 0)
		}
		tot = tb.totals(sel, subs)
		worst = slices.Max(tot)
	}
	if curve != nil {
		*curve = append(*curve, tb.point("optimized", sel, cfg))
	}
	if worst > budget {
		return sel, false
	}
	for {
		k, c, nw := tb.bestStep(sel, tot, worst, budget, subs)
		if k < 0 {
			return sel, true
		}
		for r := range tot {
			tot[r] += tb.cost(k, c, r, subs) - tb.cost(k, sel[k], r, subs)
		}
		sel[k], worst = c, nw
		if curve != nil {
			*curve = append(*curve, tb.point("optimized", sel, cfg))
		}
	}
}

// bestStep finds the change of one signal's candidate that lowers the
// error most per delivery per second added to the worst recording and
// keeps it within budget; k is -1 when none does.
func (tb *table) bestStep(sel []int, tot []float64, worst, budget float64, subs int) (k, c int, nw float64) {
	k, bestRatio, bestDE := -1, 0.0, 0.0
	for i, a := range sel {
		ea := tb.errOf(i, a)
		for b := range tb.pols {
			if !tb.ok[i][b] || b == a {
				continue
			}
			de := ea - tb.errOf(i, b)
			if de <= 1e-15 {
				continue
			}
			w := 0.0
			for r := range tot {
				w = max(w, tot[r]-tb.cost(i, a, r, subs)+tb.cost(i, b, r, subs))
			}
			if w > budget {
				continue
			}
			ratio := de / max(w-worst, 1e-9)
			if k < 0 || ratio > bestRatio || (ratio == bestRatio && de > bestDE) {
				k, c, nw, bestRatio, bestDE = i, b, w, ratio, de
			}
		}
	}
	return k, c, nw
}

// totalErr is the total error of selection sel: housekeeping signals
// are not judged (as in Report.TotalError).
func (tb *table) totalErr(sel []int) float64 {
	e := 0.0
	for k, c := range sel {
		if tb.hk[k] == "" {
			e += tb.errOf(k, c)
		}
	}
	return e
}

// point is selection sel's cost, error and enum transitions missed,
// named name: the figures of every point (the curve's, the uniform
// caps', the base's) and of the plan come from here.
func (tb *table) point(name string, sel []int, cfg OptimizeConfig) Point {
	p := Point{Name: name, Deliveries: slices.Max(tb.totals(sel, cfg.Subscribers)), Error: tb.totalErr(sel)}
	for k, c := range sel {
		if len(cfg.DB.Signals[k].Values) > 0 && tb.hk[k] == "" {
			for r := range tb.nrec {
				p.MissedEnum += tb.passes[c].fid[r][k].Missed
			}
		}
	}
	return p
}

// fill sets the plan's figures and choices from selection sel.
func (tb *table) fill(plan *Plan, sel []int, cfg OptimizeConfig) {
	plan.Deliveries = tb.totals(sel, cfg.Subscribers)
	pt := tb.point("optimized", sel, cfg)
	plan.Worst, plan.TotalError, plan.MissedEnum = pt.Deliveries, pt.Error, pt.MissedEnum
	for _, s := range cfg.DB.Signals {
		k, c := s.Index, sel[s.Index]
		ch := Choice{Signal: s.FullName(), Policy: tb.pols[c][k], Text: tb.pols[c][k].Describe(),
			Error: tb.errOf(k, c), Pins: tb.pins[k], cand: c, Housekeeping: tb.hk[k]}
		for r := range tb.nrec {
			ch.Deliveries = append(ch.Deliveries, tb.cost(k, c, r, cfg.Subscribers))
			ch.BaseDeliveries = max(ch.BaseDeliveries, tb.cost(k, 0, r, cfg.Subscribers))
		}
		// Every value's pass judged every signal's range.
		f := &tb.passes[1].fid[0][k]
		ch.Range, ch.RangeFrom, ch.DBCRangeRejected = f.Range, f.RangeFrom, f.DBCRangeRejected
		ch.BaseError = tb.errOf(k, 0)
		plan.Choices = append(plan.Choices, ch)
	}
	plan.setHead()
}

// replay runs the policy file the plan writes over every recording and
// takes the plan's figures from that run: what is written is what is
// reported. Its signals are those of the candidate passes, which do not
// interact, so the figures are the table's (TestOptimizeReproduces).
func (tb *table) replay(recs []*Recording, plan *Plan, cfg OptimizeConfig) error {
	pols := make([]pipeline.Policy, len(plan.Choices))
	for k := range plan.Choices {
		pols[k] = plan.Choices[k].Policy
	}
	pf, err := policyFile("plan", policyYAML(cfg.DB, pols, nil, ""))
	if err != nil {
		return err
	}
	c := cfg.Config
	c.Policy = pf
	p, err := runPass(recs, c)
	if err != nil {
		return err
	}
	subs := float64(cfg.Subscribers)
	plan.Deliveries = make([]float64, len(recs))
	plan.TotalError, plan.MissedEnum = 0, 0
	for _, s := range cfg.DB.Signals {
		k, ch := s.Index, &plan.Choices[s.Index]
		ch.Error = 0
		for r := range recs {
			ch.Deliveries[r] = p.envPerS[r][k] * subs
			plan.Deliveries[r] += ch.Deliveries[r]
			ch.Error += p.fid[r][k].RMSRange / float64(len(recs))
			if tb.hk[k] == "" && len(s.Values) > 0 {
				plan.MissedEnum += p.fid[r][k].Missed
			}
		}
		if tb.hk[k] == "" {
			plan.TotalError += ch.Error
		}
	}
	plan.Worst = slices.Max(plan.Deliveries)
	plan.setHead()
	return nil
}

// setHead writes the policy file's first comment from the plan's figures.
func (plan *Plan) setHead() {
	plan.head = fmt.Sprintf("Written by candec tune for a budget of %g deliveries/s to %d subscribers over %s.\n",
		plan.Budget, plan.Subscribers, strings.Join(plan.Captures, ", "))
	if !plan.Met {
		plan.head += fmt.Sprintf("The budget cannot be met: this is the least-cost policy, %.0f deliveries/s.\n", plan.Worst)
	}
	plan.head += fmt.Sprintf("Worst capture: %.0f deliveries/s; total error %.4g (sum of RMS error / range).\n", plan.Worst, plan.TotalError)
	hk := 0
	for i := range plan.Choices {
		if plan.Choices[i].Housekeeping != "" && !plan.Choices[i].Policy.Publish {
			hk++
		}
	}
	if hk > 0 {
		plan.head += fmt.Sprintf("%d housekeeping signals (checksums, counters) are not published and not in the total: --keep GLOB brings one back.\n", hk)
	}
}

// PolicyYAML is the plan as a policy file: a rule per signal, each with
// a comment line saying what it costs, what it loses and what was pinned.
func (p *Plan) PolicyYAML(db *dbc.Database) []byte {
	pols := make([]pipeline.Policy, len(db.Signals))
	comments := make([]string, len(db.Signals))
	for _, s := range db.Signals {
		ch := &p.Choices[s.Index]
		pols[s.Index] = ch.Policy
		c := fmt.Sprintf("%s: %s; %.1f deliveries/s on the worst capture, RMS error %.3g %% of range %s",
			ch.Signal, ch.Text, slices.Max(ch.Deliveries), ch.Error*100, ch.rangeText(s))
		if !ch.Policy.Publish {
			c = fmt.Sprintf("%s: %s", ch.Signal, ch.Text)
		}
		if len(ch.Pins) > 0 {
			c += "; pinned: " + strings.Join(ch.Pins, ", ")
		}
		comments[s.Index] = c
	}
	return policyYAML(db, pols, comments, p.head)
}

// rangeText says what range the choice's error is a fraction of, and
// where it came from.
func (ch *Choice) rangeText(s *dbc.Signal) string {
	r := strconv.FormatFloat(roundSig(ch.Range, 4), 'g', -1, 64)
	switch {
	case ch.RangeFrom == "dbc":
		return r + " (the DBC's)"
	case ch.DBCRangeRejected == RangeBeyondBits:
		return fmt.Sprintf("%s (observed: the DBC's [%g|%g] is beyond what %d bits at factor %g carry)", r, s.Min, s.Max, s.Length, s.Factor)
	case ch.DBCRangeRejected == RangeTooWide:
		return fmt.Sprintf("%s (observed: the DBC's [%g|%g] is over %d times wider)", r, s.Min, s.Max, tooWide)
	}
	return r + " (observed: the DBC gives none)"
}
