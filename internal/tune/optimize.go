package tune

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"time"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/pipeline"
)

// ErrPin is wrapped by the errors of a bad pin.
var ErrPin = errors.New("tune: bad pin")

// Pins are the constraints a person sets on the optimizer. A glob
// matches a signal's name or its message.signal, as a policy's match.
type Pins struct {
	// Keep are globs of signals whose policy stays as the base policy
	// has it.
	Keep []string
	// MinRate and MaxLag are limits on the signals their globs match:
	// an envelope at least every 1/Hz s (a cap no lower, and on change
	// with a heartbeat of 1/Hz), a change lag no longer than Max.
	MinRate []RateRule
	MaxLag  []LagRule
	// Transitions are globs of signals that must lose no transition;
	// nil means every signal with a value table, unless AnyLoss.
	Transitions []string
	AnyLoss     bool
}

// RateRule is a minimum rate for the signals Glob matches.
type RateRule struct {
	Glob string
	Hz   float64
}

// LagRule is a maximum change lag for the signals Glob matches.
type LagRule struct {
	Glob string
	Max  time.Duration
}

// OptimizeConfig says what to optimise.
type OptimizeConfig struct {
	// Config is the database, the base policy (nil: the default), the
	// subscribers and the topic template; Window is not used.
	Config
	// Budget is the deliveries per second the worst recording may cost.
	Budget float64
	Pins   Pins
	// Jobs is how many candidate policies run at once; 0: GOMAXPROCS.
	Jobs int
}

// Choice is what the optimizer gave one signal, and why.
type Choice struct {
	Signal string          `json:"signal"`
	Policy pipeline.Policy `json:"-"`
	Text   string          `json:"policy"`
	// Deliveries are per recording; Error the mean RMS error as a
	// fraction of the range over them.
	Deliveries []float64 `json:"deliveries_per_s"`
	Error      float64   `json:"error"`
	// Pins name the constraints that applied.
	Pins []string `json:"pins,omitempty"`
	// BaseDeliveries and BaseError are the same figures under the base
	// policy (deliveries on the worst capture).
	BaseDeliveries float64 `json:"base_deliveries_per_s"`
	BaseError      float64 `json:"base_error"`
	// Housekeeping says the signal is a checksum or a rolling counter
	// (Signal.Housekeeping): not in the totals, and not published
	// unless kept.
	Housekeeping string `json:"housekeeping,omitempty"`
	// Range, RangeFrom and DBCRangeRejected are what its error is a
	// fraction of, on the first capture (see Fidelity).
	Range            float64 `json:"range"`
	RangeFrom        string  `json:"range_from"`
	DBCRangeRejected string  `json:"dbc_range_rejected,omitempty"`
	cand             int
}

// Point is a policy's cost and error: the deliveries per second of the
// worst recording and the total error (mean over recordings).
type Point struct {
	Name       string  `json:"name"`
	Deliveries float64 `json:"deliveries_per_s"`
	Error      float64 `json:"total_error"`
	MissedEnum uint64  `json:"missed_enum_transitions"`
}

// Plan is the optimizer's result.
type Plan struct {
	Budget      float64  `json:"budget"`
	Subscribers int      `json:"subscribers"`
	Captures    []string `json:"captures"`
	// Deliveries are the plan's per recording; Worst the highest.
	Deliveries []float64 `json:"deliveries_per_s"`
	Worst      float64   `json:"worst_deliveries_per_s"`
	TotalError float64   `json:"total_error"`
	MissedEnum uint64    `json:"missed_enum_transitions"`
	// Deliveries, Worst, TotalError and MissedEnum, and each choice's
	// figures, are those of the policy file written (PolicyYAML), run
	// again over every recording once chosen.
	// Met is false when even the least-cost policy exceeds the budget:
	// the plan is then that policy.
	Met     bool     `json:"budget_met"`
	Choices []Choice `json:"signals"`
	// Curve is the optimizer's path without a budget, least cost
	// first; Uniform the uniform caps; Base the base policy.
	Curve   []Point `json:"curve"`
	Uniform []Point `json:"uniform_caps"`
	Base    Point   `json:"base"`
	// head is the policy file's first comment.
	head string
}

// table is every candidate's figures: by candidate, recording, signal.
type table struct {
	pols   [][]pipeline.Policy // by candidate, signal
	passes []pass
	ok     [][]bool // by signal, candidate: the pins allow it
	pins   [][]string
	errs   [][]float64 // by signal, candidate: the mean error
	nrec   int
	hk     []string // by signal: housekeeping (housekeepingIn)
	off    int      // the candidate that does not publish
}

// Optimize chooses per signal the candidate policy that makes the
// total error least with the worst recording's deliveries within the
// budget (see docs/tuning.md for the method).
func Optimize(ctx context.Context, recs []*Recording, cfg OptimizeConfig) (*Plan, error) {
	if err := checkOptimize(recs, &cfg); err != nil {
		return nil, err
	}
	tb, err := buildTable(ctx, recs, cfg)
	if err != nil {
		return nil, err
	}
	plan := &Plan{Budget: cfg.Budget, Subscribers: cfg.Subscribers}
	for _, r := range recs {
		plan.Captures = append(plan.Captures, r.Name)
	}
	sel, met := tb.allocate(cfg, cfg.Budget, nil)
	plan.Met = met
	tb.allocate(cfg, math.Inf(1), &plan.Curve)
	tb.fill(plan, sel, cfg)
	if err := tb.replay(recs, plan, cfg); err != nil {
		return nil, err
	}
	for _, c := range uniformCaps() {
		plan.Uniform = append(plan.Uniform, tb.point(fmt.Sprintf("cap %g Hz", ladder[c-1].cap), uniformSel(len(sel), c), cfg))
	}
	plan.Base = tb.point("base", uniformSel(len(sel), 0), cfg)
	return plan, nil
}

func uniformSel(n, c int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = c
	}
	return s
}

// checkOptimize refuses what cannot be optimised and fills defaults.
func checkOptimize(recs []*Recording, cfg *OptimizeConfig) error {
	if !(cfg.Budget > 0) || math.IsInf(cfg.Budget, 1) {
		return fmt.Errorf("%w: the budget must be a number of deliveries/s more than 0, got %g", ErrConfig, cfg.Budget)
	}
	if len(recs) == 0 {
		return fmt.Errorf("%w: no capture", ErrConfig)
	}
	if cfg.Subscribers < 0 {
		return fmt.Errorf("%w: subscribers must be 0 (the default, %d) or more, got %d", ErrConfig, DefaultSubscribers, cfg.Subscribers)
	}
	cfg.Subscribers = cmp.Or(cfg.Subscribers, DefaultSubscribers)
	if cfg.Policy == nil {
		cfg.Policy = pipeline.DefaultPolicy()
	}
	return checkPins(cfg.DB, &cfg.Pins)
}

// checkPins refuses a glob that is malformed or matches no signal, a
// minimum rate or maximum lag that is not more than 0.
func checkPins(db *dbc.Database, p *Pins) error {
	check := func(what, glob string) error {
		if _, err := path.Match(glob, ""); err != nil {
			return fmt.Errorf("%w: %s: bad glob %q: %v", ErrPin, what, glob, err)
		}
		for _, s := range db.Signals {
			if globMatch(glob, s) {
				return nil
			}
		}
		return fmt.Errorf("%w: %s: glob %q matches no signal of the DBC", ErrPin, what, glob)
	}
	for _, g := range p.Keep {
		if err := check("keep", g); err != nil {
			return err
		}
	}
	for _, g := range p.Transitions {
		if err := check("transitions", g); err != nil {
			return err
		}
	}
	for _, r := range p.MinRate {
		if !(r.Hz > 0) || math.IsInf(r.Hz, 1) {
			return fmt.Errorf("%w: min rate of %q must be a rate in Hz more than 0, got %g", ErrPin, r.Glob, r.Hz)
		}
		if err := check("min rate", r.Glob); err != nil {
			return err
		}
	}
	for _, r := range p.MaxLag {
		if r.Max <= 0 {
			return fmt.Errorf("%w: max lag of %q must be more than 0, got %s", ErrPin, r.Glob, r.Max)
		}
		if err := check("max lag", r.Glob); err != nil {
			return err
		}
	}
	return nil
}

func globMatch(glob string, s *dbc.Signal) bool {
	ok1, _ := path.Match(glob, s.Name)
	ok2, _ := path.Match(glob, s.FullName())
	return ok1 || ok2
}
