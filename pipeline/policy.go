package pipeline

import (
	"time"

	"github.com/yukart/candec/dbc"
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
}

// Name returns the file name the policy was read from ("default" for the
// built-in one).
func (p *PolicyFile) Name() string { return p.name }

// LoadPolicy reads a YAML policy file (see docs/policy.md). Errors name
// the file, the line and the key.
func LoadPolicy(path string) (*PolicyFile, error) { return loadPolicy(path) }

// ParsePolicy parses a YAML policy; name is used in errors.
func ParsePolicy(name string, data []byte) (*PolicyFile, error) { return parsePolicy(name, data) }

// DefaultPolicy returns the built-in policy (docs/policy.md explains
// it): every signal capped at 20 Hz; states (signals with a value table)
// and temperatures on change with a 1 s heartbeat; stale after 3 cycle
// times of the message.
func DefaultPolicy() *PolicyFile { return defaultPolicy() }

// Resolve returns the policy of signal s: the defaults, then each
// matching rule in order, each key set by a later rule replacing the
// earlier value.
func (p *PolicyFile) Resolve(s *dbc.Signal) Policy { return p.resolve(s) }
