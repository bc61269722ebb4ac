package tune

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/base/defaults"
	"github.com/yukart/candec/pipeline"
)

// candidate is a policy the optimizer may give a signal: a cap (0 for
// none), on change or not, and a deadband as a fraction of the signal's
// range. Candidate 0 is the base policy as written (see candidates).
type candidate struct {
	cap      float64
	onChange bool
	band     float64
}

// ladder is what every signal may get besides the base policy: every
// value; caps alone, from 50 Hz down to one envelope in 5 s; and on
// change, exactly or with a deadband, with and without caps.
var ladder = []candidate{
	{},
	{cap: 50}, {cap: 20}, {cap: 10}, {cap: 5}, {cap: 2}, {cap: 1}, {cap: 0.2},
	{onChange: true}, {onChange: true, cap: 5},
	{onChange: true, cap: 10, band: 0.01}, {onChange: true, cap: 5, band: 0.05},
}

// uniformCaps are the ladder's candidates that are a uniform cap: the
// same max_rate for every signal, nothing else.
func uniformCaps() []int {
	var out []int
	for i, c := range ladder {
		if c.cap > 0 && !c.onChange {
			out = append(out, i+1)
		}
	}
	return out
}

// policyOf is candidate c for signal sig: base is the signal's base
// policy, rng the range deadbands are fractions of, hz a pinned minimum
// rate (0 for none), which gives an on-change policy its heartbeat. The
// keys a candidate decides are set here (publish, max_rate, on_change,
// the deadbands, heartbeat); every other key (stale_after, and any key
// added to pipeline's table) is kept as the base policy has it.
func (c candidate) policyOf(base pipeline.Policy, rng, hz float64) pipeline.Policy {
	p := base
	p.Publish, p.MaxRate, p.OnChange = true, c.cap, c.onChange
	p.Deadband, p.DeadbandPct, p.Heartbeat = 0, 0, 0
	if c.onChange && c.band > 0 && rng > 0 {
		p.Deadband = roundSig(c.band*rng, 3)
	}
	if c.onChange && hz > 0 {
		p.Heartbeat = time.Duration(math.Floor(1e9/hz/1e6)) * time.Millisecond
		if p.Heartbeat <= 0 {
			p.Heartbeat = time.Duration(math.Floor(1e9 / hz))
		}
	}
	return p
}

// roundSig rounds x to n significant digits: a deadband a person reads.
func roundSig(x float64, n int) float64 {
	if x == 0 {
		return 0
	}
	e := math.Pow(10, float64(n)-math.Ceil(math.Log10(math.Abs(x))))
	return math.Round(x*e) / e
}

// pass is what one candidate policy gave on every recording: per
// recording and signal index, the envelopes per second and fidelity.
type pass struct {
	envPerS [][]float64
	fid     [][]Fidelity
}

// runPasses runs every policy in pols over every recording, jobs at a
// time, and returns the passes in order.
func runPasses(ctx context.Context, recs []*Recording, pols []*pipeline.PolicyFile, cfg Config, jobs int) ([]pass, error) {
	jobs = defaults.Positive(jobs, runtime.GOMAXPROCS(0))
	out := make([]pass, len(pols))
	errs := make([]error, len(pols))
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for i := range pols {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if ctx.Err() != nil {
				errs[i] = fmt.Errorf("tune: %w", ctx.Err())
				return
			}
			c := cfg
			c.Policy = pols[i]
			out[i], errs[i] = runPass(recs, c)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// runPass runs one policy over every recording.
func runPass(recs []*Recording, cfg Config) (pass, error) {
	var p pass
	for _, r := range recs {
		c, err := count(r.source(), cfg, r.obs)
		if err != nil {
			return p, fmt.Errorf("%w (%s)", err, r.Name)
		}
		secs := defaults.Positive(c.res.Span.Seconds(), 1)
		env := make([]float64, len(cfg.DB.Signals))
		fid := make([]Fidelity, len(cfg.DB.Signals))
		for _, s := range cfg.DB.Signals {
			env[s.Index] = float64(c.tr.envelopes[s.Index]) / secs
			fid[s.Index] = c.tr.fid[s.Index].result(s, secs, &r.obs[s.Index])
			c.tr.fid[s.Index].release()
		}
		p.envPerS = append(p.envPerS, env)
		p.fid = append(p.fid, fid)
	}
	return p, nil
}

// rangeOf is the range sig's deadbands are fractions of, judged on all
// the recordings' values as a report judges it on one capture's
// (rangeOfSignal).
func rangeOf(sig *dbc.Signal, recs []*Recording) float64 {
	if len(recs) == 1 {
		rng, _, _ := rangeOfSignal(sig, &recs[0].obs[sig.Index])
		return rng
	}
	var all spread
	for _, r := range recs {
		all.merge(&r.obs[sig.Index])
	}
	rng, _, _ := rangeOfSignal(sig, &all)
	return rng
}

// housekeepingIn is what housekeepingOf says of sig on all the
// recordings' values.
func housekeepingIn(sig *dbc.Signal, recs []*Recording) string {
	var st rawSteps
	for _, r := range recs {
		st.merge(r.steps[sig.Index])
	}
	return housekeepingOf(sig, st)
}
