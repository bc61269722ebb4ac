package pipeline

import (
	"context"
	_ "embed"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/base/readfile"
)

// Policy is the resolved policy of one signal.
type Policy struct {
	// Publish is false for a signal that is never published.
	Publish bool
	// MaxRate caps the signal at one envelope per 1/MaxRate seconds of
	// frame time: the first value after each window goes out at once,
	// and a held value is published only when no fresher frame comes by
	// its grace deadline; 0 means no cap.
	MaxRate float64
	// OnChange publishes a value only when it differs from the last one
	// published by more than the deadbands.
	OnChange bool
	// Deadband is the absolute deadband, in the signal's unit.
	Deadband float64
	// DeadbandPct is the relative deadband, in percent of the magnitude
	// of the last value published.
	DeadbandPct float64
	// Heartbeat republishes the current value when nothing was published
	// for this long; 0 means none.
	Heartbeat time.Duration
	// StaleAfter marks the signal stale when no value came for longer;
	// 0 means never.
	StaleAfter time.Duration
}

// PolicyFile is a parsed policy file: defaults, then rules applied in
// order. Build it with LoadPolicy, ParsePolicy or DefaultPolicy; it is
// immutable.
type PolicyFile struct {
	name     string
	defaults settings
	rules    []rule
	// byName indexes the rules that select by names alone, each glob
	// without a special character (a rule per signal, as tune
	// --write-policy writes): by name, the positions of the rules that
	// name it. others are the positions of every other rule. Resolve
	// then looks at a signal's own rules and the others, not at all.
	byName map[string][]int
	others []int
}

// index fills byName and others.
func (p *PolicyFile) index() {
	p.byName = map[string][]int{}
	for i := range p.rules {
		r := &p.rules[i]
		literal := len(r.match) > 0 && len(r.unit) == 0 && r.hasValues == nil && r.housekeeping == nil
		for _, g := range r.match {
			literal = literal && !strings.ContainsAny(g, `*?[\`)
		}
		if !literal {
			p.others = append(p.others, i)
			continue
		}
		for _, g := range r.match {
			if l := p.byName[g]; len(l) == 0 || l[len(l)-1] != i {
				p.byName[g] = append(l, i)
			}
		}
	}
}

// Name returns the file name the policy was read from ("default" for the
// built-in one).
func (p *PolicyFile) Name() string { return p.name }

// MaxPolicySize is the largest policy file LoadPolicy reads: 4 MiB, some
// 50,000 rules. A bigger file, or one that is not a regular file (a FIFO,
// a device), is refused before it is read.
const MaxPolicySize = 4 << 20

// LoadPolicy reads a YAML policy file (see docs/policy.md). Errors name
// the file, the line and the key.
func LoadPolicy(path string) (*PolicyFile, error) {
	return LoadPolicyContext(context.Background(), path)
}

// LoadPolicyContext is LoadPolicy, ended when ctx ends while the file is
// read.
func LoadPolicyContext(ctx context.Context, path string) (*PolicyFile, error) {
	data, err := readfile.Read(ctx, path, MaxPolicySize)
	if err != nil {
		return nil, fmt.Errorf("pipeline: load policy: %w", err)
	}
	return ParsePolicy(path, data)
}

//go:embed default_policy.yaml
var defaultPolicyYAML []byte

// DefaultPolicyYAML returns the text of the built-in policy, a starting
// point for a policy file of one's own.
func DefaultPolicyYAML() []byte { return append([]byte(nil), defaultPolicyYAML...) }

// DefaultPolicy returns the built-in policy (docs/policy.md explains
// it): every signal capped at 20 Hz; states (signals with a value table)
// and temperatures on change with a 1 s heartbeat; stale after 3 cycle
// times of the message.
func DefaultPolicy() *PolicyFile {
	p, err := ParsePolicy("default", defaultPolicyYAML)
	if err != nil {
		// The embedded file is tested; reaching this is a build defect.
		panic(err)
	}
	return p
}

// Resolve returns the policy of signal sig: the defaults, then each
// matching rule in order, each key set by a later rule replacing the
// earlier value.
func (p *PolicyFile) Resolve(sig *dbc.Signal) Policy {
	s := initial()
	s.merge(&p.defaults)
	for _, i := range p.candidates(sig) {
		if p.rules[i].matches(sig) {
			s.merge(&p.rules[i].settings)
		}
	}
	pol := s.pol
	switch {
	case s.set&staleAfterBit != 0:
		// Set by a section: it wins over stale_cycles.
	case sig.Message != nil && sig.Message.CycleTime > 0 && s.staleCycles > 0:
		pol.StaleAfter = time.Duration(math.Round(s.staleCycles * float64(sig.Message.CycleTime)))
	default:
		pol.StaleAfter = s.staleDefault
	}
	return pol
}

// candidates are the positions, in order, of the rules that may match
// sig: those that name it, and every rule that does not select by names
// alone.
func (p *PolicyFile) candidates(sig *dbc.Signal) []int {
	if p.byName == nil { // not indexed: an empty file has no rules
		out := make([]int, len(p.rules))
		for i := range out {
			out[i] = i
		}
		return out
	}
	named, full := p.byName[sig.Name], p.byName[sig.FullName()]
	if len(named) == 0 && len(full) == 0 {
		return p.others
	}
	out := make([]int, 0, len(p.others)+len(named)+len(full))
	out = append(append(append(out, p.others...), named...), full...)
	slices.Sort(out)
	return slices.Compact(out)
}

// rule is one entry of "rules": selectors, all of which must hold, and
// the settings it applies.
type rule struct {
	match     []string // globs on the signal name or message.signal
	unit      []string // globs on the unit
	hasValues *bool
	// housekeeping selects by what the signal's name says it is
	// (HousekeepingName): a checksum or a counter, in any case.
	housekeeping *bool
	settings
}

func (r *rule) matches(s *dbc.Signal) bool {
	if len(r.match) > 0 && !anyGlob(r.match, s.Name) && !anyGlob(r.match, s.FullName()) {
		return false
	}
	if len(r.unit) > 0 && !anyGlob(r.unit, s.Unit) {
		return false
	}
	if r.hasValues != nil && *r.hasValues != (len(s.Values) > 0) {
		return false
	}
	if r.housekeeping != nil && *r.housekeeping != (HousekeepingName(s.Name) != "") {
		return false
	}
	return true
}

// anyGlob reports whether a glob matches name. A glob without a
// special character is name itself: compared, not matched, so that a
// policy of a rule per signal (as tune --write-policy writes) resolves
// quickly.
func anyGlob(globs []string, name string) bool {
	for _, g := range globs {
		if !strings.ContainsAny(g, `*?[\`) {
			if g == name {
				return true
			}
			continue
		}
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}
