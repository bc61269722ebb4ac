package scenario

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/yukart/candec/internal/base/readfile"
	"github.com/yukart/candec/internal/base/termtext"
)

// Errors.
var (
	// ErrInvalid: the file parses but declares something inconsistent.
	ErrInvalid = errors.New("scenario: invalid scenarios file")
	// ErrUnknownProfile: a profile that the file does not declare.
	ErrUnknownProfile = errors.New("scenario: unknown profile")
)

// Error says what is wrong with a scenarios file and where.
type Error struct {
	// File is the scenarios file.
	File string
	// Line is the 1-based line of the offending entry, or 0.
	Line int
	// Msg says what is wrong.
	Msg string
	// Err is ErrInvalid, or the YAML parser's error.
	Err error
}

// Error reads like "benchmarks/scenarios.yaml:42: scenario car-3-50hz:
// unknown dbc "mix4"".
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Unwrap returns ErrInvalid or the parser's error.
func (e *Error) Unwrap() error { return e.Err }

// Streams that envelope subscribers can take.
const (
	// StreamSignals: every per-signal topic, by wildcard.
	StreamSignals = "signals"
	// StreamWindow: the window stream, one message per publish window.
	StreamWindow = "window"
)

// Duration is a time.Duration written in YAML as "20s", "500ms".
type Duration time.Duration

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		// time's error would quote s whole.
		return fmt.Errorf("line %d: duration %s: want a duration such as 10s or 500ms", n.Line, termtext.Quote(s))
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as a string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// File is a parsed scenarios file.
type File struct {
	// Path is where the file was read from; relative paths inside it are
	// relative to its directory.
	Path string `yaml:"-"`
	// Defaults apply to every scenario that does not set its own.
	Defaults Settings `yaml:"defaults"`
	// Capture is the capture every load replays.
	Capture string `yaml:"capture"`
	// Loads, DBCs and Policies are declared by key.
	Loads    map[string]Load   `yaml:"loads"`
	DBCs     map[string]DBC    `yaml:"dbcs"`
	Policies map[string]Policy `yaml:"policies"`
	// Scenarios in the order they are declared.
	Scenarios []Scenario `yaml:"scenarios"`
	// Profiles by name.
	Profiles map[string]Profile `yaml:"profiles"`

	lines map[string]int // scenario name → line
}

// Settings are the run parameters a scenario can set or inherit.
type Settings struct {
	// Duration is the measured window.
	Duration Duration `yaml:"duration"`
	// Warmup runs the load before the window opens; it is not measured.
	Warmup Duration `yaml:"warmup"`
	// RawSubscribers take the raw stream besides the decoder.
	RawSubscribers *int `yaml:"raw_subscribers"`
	// EnvelopeSubscribers take every envelope.
	EnvelopeSubscribers *int `yaml:"envelope_subscribers"`
}

// Load says how the capture is replayed.
type Load struct {
	// Label names the load in tables ("car", "full bus").
	Label string `yaml:"label"`
	// Speed multiplies the capture's own rate (1 = its own timing).
	Speed float64 `yaml:"speed"`
	// Flood replays as fast as possible, ignoring Speed.
	Flood bool `yaml:"flood"`
	// PerFrame sends one raw message per frame instead of 10 ms batches.
	PerFrame bool `yaml:"per_frame"`
}

// DBC is a database the decoder is started with.
type DBC struct {
	// File is the DBC file.
	File string `yaml:"file"`
	// Label is its signals-per-frame column ("3", "8", "car DBC").
	Label string `yaml:"label"`
}

// Policy is a policy file the decoder is started with.
type Policy struct {
	// File is the policy file; empty for the service's default policy.
	File string `yaml:"file"`
	// Label is its cap column ("20 Hz", "none", "default").
	Label string `yaml:"label"`
}

// Reference is a row of the car team's report, for comparison.
type Reference struct {
	// Envelopes and Deliveries are per second; Deliveries 0 means the
	// report has none (the run collapsed).
	Envelopes  float64 `yaml:"envelopes"`
	Deliveries float64 `yaml:"deliveries"`
	// BrokerCPU is the broker's share of one core in percent.
	BrokerCPU float64 `yaml:"broker_cpu"`
	// P50 and P99 are envelope latencies in milliseconds.
	P50 float64 `yaml:"p50"`
	P99 float64 `yaml:"p99"`
	// Note is what the report says beside the figures.
	Note string `yaml:"note"`
}

// Scenario is one row of a table: a load, a DBC and a policy.
type Scenario struct {
	// Name identifies the scenario in results and summaries.
	Name string `yaml:"name"`
	// Description says what the row shows.
	Description string `yaml:"description"`
	// Load, DBC and Policy are keys into the file's declarations.
	Load   string `yaml:"load"`
	DBC    string `yaml:"dbc"`
	Policy string `yaml:"policy"`
	// Stream is StreamSignals (default) or StreamWindow.
	Stream string `yaml:"stream"`
	// Settings override the defaults.
	Settings `yaml:",inline"`
	// Report is the report's figures for the same row, if it has one.
	Report *Reference `yaml:"report"`
	// PredictedDeliveries is what `candec tune` predicts the row
	// delivers per second (0: no prediction); a run more than
	// PredictionTolerance from it is warned of.
	PredictedDeliveries float64 `yaml:"predicted_deliveries"`
}

// PredictionTolerance is how far, as a fraction, a run's deliveries/s
// may be from its scenario's PredictedDeliveries without a warning.
const PredictionTolerance = 0.02

// Profile is a named list of scenarios.
type Profile struct {
	// Description says what the profile is for.
	Description string `yaml:"description"`
	// Duration and Warmup, when set, override every scenario's.
	Duration Duration `yaml:"duration"`
	Warmup   Duration `yaml:"warmup"`
	// Scenarios are run in this order.
	Scenarios []string `yaml:"scenarios"`
}

// MaxFileSize is the largest scenarios file LoadFile reads: 1 MiB. A
// bigger file, or one that is not a regular file, is refused unread.
const MaxFileSize = 1 << 20

// LoadFile reads and validates a scenarios file.
func LoadFile(path string) (*File, error) {
	b, err := readfile.Read(context.Background(), path, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	return Parse(path, b)
}

// Parse parses and validates the contents of a scenarios file read from
// path.
func Parse(path string, b []byte) (*File, error) {
	f := &File{Path: path}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(f); err != nil {
		if errors.Is(err, io.EOF) {
			// yaml's word for a file with no document in it.
			return nil, &Error{File: path, Msg: "the file is empty: no capture and no scenarios", Err: ErrInvalid}
		}
		return nil, &Error{File: path, Msg: err.Error(), Err: err}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, &Error{File: path, Msg: err.Error(), Err: err}
	}
	f.lines = scenarioLines(&root)
	if err := f.validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// scenarioLines maps each scenario's name to the line it starts on.
func scenarioLines(root *yaml.Node) map[string]int {
	lines := map[string]int{}
	if len(root.Content) == 0 {
		return lines
	}
	doc := root.Content[0]
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value != "scenarios" {
			continue
		}
		for _, s := range doc.Content[i+1].Content {
			for j := 0; j+1 < len(s.Content); j += 2 {
				if s.Content[j].Value == "name" {
					lines[s.Content[j+1].Value] = s.Line
				}
			}
		}
	}
	return lines
}

func (f *File) errorf(line int, format string, args ...any) error {
	return &Error{File: f.Path, Line: line, Msg: fmt.Sprintf(format, args...), Err: ErrInvalid}
}

func (f *File) validate() error {
	// Names are printed in errors and in the bench's tables as they
	// are: they must be short printable text.
	var names []string
	for _, m := range []map[string]bool{setOf(f.Loads), setOf(f.DBCs), setOf(f.Policies), setOf(f.Profiles)} {
		for n := range m {
			names = append(names, n)
		}
	}
	for i := range f.Scenarios {
		names = append(names, f.Scenarios[i].Name)
	}
	for _, n := range names {
		if termtext.Clean(n) != n || utf8.RuneCountInString(n) > termtext.MaxQuote {
			return f.errorf(f.lines[n], "name %s: want printable text of at most %d characters", termtext.Quote(n), termtext.MaxQuote)
		}
	}
	if f.Capture == "" {
		return f.errorf(0, "no capture")
	}
	for k, l := range f.Loads {
		if !l.Flood && l.Speed <= 0 {
			return f.errorf(0, "load %s: speed %v, want > 0 (or flood: true)", k, l.Speed)
		}
	}
	for k, d := range f.DBCs {
		if d.File == "" {
			return f.errorf(0, "dbc %s: no file", k)
		}
	}
	seen := map[string]bool{}
	for i := range f.Scenarios {
		s := &f.Scenarios[i]
		line := f.lines[s.Name]
		switch {
		case s.Name == "":
			return f.errorf(0, "scenario %d has no name", i+1)
		case seen[s.Name]:
			return f.errorf(line, "scenario %s declared twice", s.Name)
		}
		seen[s.Name] = true
		if _, ok := f.Loads[s.Load]; !ok {
			return f.errorf(line, "scenario %s: unknown load %s (declared: %s)", termtext.Quote(s.Name), termtext.Quote(s.Load), keys(f.Loads))
		}
		if _, ok := f.DBCs[s.DBC]; !ok {
			return f.errorf(line, "scenario %s: unknown dbc %s (declared: %s)", termtext.Quote(s.Name), termtext.Quote(s.DBC), keys(f.DBCs))
		}
		if _, ok := f.Policies[s.Policy]; !ok {
			return f.errorf(line, "scenario %s: unknown policy %s (declared: %s)", termtext.Quote(s.Name), termtext.Quote(s.Policy), keys(f.Policies))
		}
		switch s.Stream {
		case "":
			s.Stream = StreamSignals
		case StreamSignals, StreamWindow:
		default:
			return f.errorf(line, "scenario %s: stream %s, want %q or %q", termtext.Quote(s.Name), termtext.Quote(s.Stream), StreamSignals, StreamWindow)
		}
		if s.Duration < 0 || s.Warmup < 0 {
			return f.errorf(line, "scenario %s: negative duration or warm-up", s.Name)
		}
		if (s.RawSubscribers != nil && *s.RawSubscribers < 0) || (s.EnvelopeSubscribers != nil && *s.EnvelopeSubscribers < 0) {
			return f.errorf(line, "scenario %s: negative subscriber count", s.Name)
		}
	}
	for name, p := range f.Profiles {
		if len(p.Scenarios) == 0 {
			return f.errorf(0, "profile %s lists no scenarios", name)
		}
		for _, s := range p.Scenarios {
			if !seen[s] {
				return f.errorf(0, "profile %s: unknown scenario %s", termtext.Quote(name), termtext.Quote(s))
			}
		}
	}
	return nil
}

// setOf returns the keys of m as a set.
func setOf[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

func keys[V any](m map[string]V) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	if len(ks) == 0 {
		return "none"
	}
	for i, k := range ks {
		ks[i] = termtext.Clean(termtext.Cut(k, termtext.MaxQuote))
	}
	return termtext.Cut(fmt.Sprint(ks), 4*termtext.MaxQuote)
}

// ProfileNames returns the declared profiles, sorted.
func (f *File) ProfileNames() []string {
	names := make([]string, 0, len(f.Profiles))
	for n := range f.Profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Scenario returns the scenario with the given name.
func (f *File) Scenario(name string) (*Scenario, bool) {
	for i := range f.Scenarios {
		if f.Scenarios[i].Name == name {
			return &f.Scenarios[i], true
		}
	}
	return nil, false
}

// resolve makes a path in the file relative to the working directory.
func (f *File) resolve(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(f.Path), p)
}

// Run is a scenario with everything resolved: what one bench run does.
type Run struct {
	// Scenario and Profile name the run.
	Scenario, Profile string
	// Description is the scenario's.
	Description string
	// Capture is the capture file, relative to the working directory.
	Capture string
	// Load is the load, and LoadKey its key.
	Load    Load
	LoadKey string
	// DBC and Policy are resolved: their files relative to the working
	// directory (Policy.File empty for the default policy).
	DBC       DBC
	DBCKey    string
	Policy    Policy
	PolicyKey string
	// Stream is StreamSignals or StreamWindow.
	Stream string
	// Duration is the measured window, Warmup the time before it.
	Duration, Warmup time.Duration
	// RawSubscribers and EnvelopeSubscribers are the subscriber counts.
	RawSubscribers, EnvelopeSubscribers int
	// Report is the report's row, or nil.
	Report *Reference
	// PredictedDeliveries is the scenario's.
	PredictedDeliveries float64
}

// Overrides change every run of a plan; zero values change nothing.
type Overrides struct {
	// Duration and Warmup replace the profile's and scenarios'.
	Duration, Warmup time.Duration
	// Stream, when set, puts every run's envelope subscribers on it.
	Stream string
}

// Plan expands a profile into its runs. A profile name that is not
// declared but names a scenario plans that scenario alone.
func (f *File) Plan(profile string, o Overrides) ([]Run, error) {
	p, ok := f.Profiles[profile]
	if !ok {
		if _, isScenario := f.Scenario(profile); !isScenario {
			return nil, fmt.Errorf("%w %s (declared: %s)", ErrUnknownProfile, termtext.Quote(profile), keys(f.Profiles))
		}
		p = Profile{Scenarios: []string{profile}}
	}
	if o.Stream != "" && o.Stream != StreamSignals && o.Stream != StreamWindow {
		return nil, fmt.Errorf("%w: stream %s, want %q or %q", ErrInvalid, termtext.Quote(o.Stream), StreamSignals, StreamWindow)
	}
	runs := make([]Run, 0, len(p.Scenarios))
	for _, name := range p.Scenarios {
		s, _ := f.Scenario(name)
		r := Run{
			Scenario:            s.Name,
			Profile:             profile,
			Description:         s.Description,
			Capture:             f.resolve(f.Capture),
			Load:                f.Loads[s.Load],
			LoadKey:             s.Load,
			DBC:                 f.DBCs[s.DBC],
			DBCKey:              s.DBC,
			Policy:              f.Policies[s.Policy],
			PolicyKey:           s.Policy,
			Stream:              s.Stream,
			Duration:            first(o.Duration, time.Duration(p.Duration), time.Duration(s.Duration), time.Duration(f.Defaults.Duration), 20*time.Second),
			Warmup:              first(o.Warmup, time.Duration(p.Warmup), time.Duration(s.Warmup), time.Duration(f.Defaults.Warmup), 2*time.Second),
			RawSubscribers:      firstInt(s.RawSubscribers, f.Defaults.RawSubscribers, 3),
			EnvelopeSubscribers: firstInt(s.EnvelopeSubscribers, f.Defaults.EnvelopeSubscribers, 5),
			Report:              s.Report,
			PredictedDeliveries: s.PredictedDeliveries,
		}
		if o.Stream != "" {
			r.Stream = o.Stream
		}
		r.DBC.File = f.resolve(r.DBC.File)
		r.Policy.File = f.resolve(r.Policy.File)
		runs = append(runs, r)
	}
	return runs, nil
}

// first returns the first positive duration.
func first(ds ...time.Duration) time.Duration {
	i := slices.IndexFunc(ds, func(d time.Duration) bool { return d > 0 })
	if i < 0 {
		return 0
	}
	return ds[i]
}

// firstInt returns the first set value, or def.
func firstInt(a, b *int, def int) int {
	switch {
	case a != nil:
		return *a
	case b != nil:
		return *b
	}
	return def
}
