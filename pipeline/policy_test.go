package pipeline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/dbc"
)

func TestResolve(t *testing.T) {
	db := testDB(t)
	sig := func(name string) *dbc.Signal {
		for _, s := range db.Signals {
			if s.Name == name {
				return s
			}
		}
		t.Fatalf("no signal %s", name)
		return nil
	}
	const policy = `
defaults:
  max_rate: 20
  stale_cycles: 3
rules:
  - match: "*"            # every signal
    heartbeat: 2s
  - match: Fast.*         # message.signal
    max_rate: 50
  - match: [Speed, Nope]  # signal name; a later rule wins key by key
    max_rate: 100
    on_change: true
  - has_values: true
    on_change: true
    max_rate: 0
  - unit: deg*
    deadband: 0.5
    deadband_pct: 1
  - match: Fast2.Count
    publish: false
    stale_after: 10s
  - match: Count          # stale_after set above stays; cycles do not apply
    stale_cycles: 100
`
	p, err := ParsePolicy("rules.yaml", []byte(policy))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		sig  string
		want Policy
	}{
		{"Speed", Policy{Publish: true, MaxRate: 100, OnChange: true, Heartbeat: 2 * time.Second, StaleAfter: 30 * time.Millisecond}},
		{"Count", Policy{Publish: false, MaxRate: 20, Heartbeat: 2 * time.Second, StaleAfter: 10 * time.Second}},
		{"TempA", Policy{Publish: true, MaxRate: 20, Deadband: 0.5, DeadbandPct: 1, Heartbeat: 2 * time.Second, StaleAfter: 300 * time.Millisecond}},
		{"Gear", Policy{Publish: true, OnChange: true, Heartbeat: 2 * time.Second, StaleAfter: 150 * time.Millisecond}},
		{"Code", Policy{Publish: true, MaxRate: 20, Heartbeat: 2 * time.Second}},
	}
	for _, tt := range tests {
		if got := p.Resolve(sig(tt.sig)); got != tt.want {
			t.Errorf("Resolve(%s) = %+v, want %+v", tt.sig, got, tt.want)
		}
	}
}

func TestDefaultPolicy(t *testing.T) {
	db := testDB(t)
	p := DefaultPolicy()
	want := map[string]Policy{
		"Speed": {Publish: true, MaxRate: 20, StaleAfter: 30 * time.Millisecond},
		"Count": {Publish: true, MaxRate: 20, StaleAfter: 30 * time.Millisecond},
		"TempA": {Publish: true, MaxRate: 20, OnChange: true, Deadband: 0.5, Heartbeat: time.Second, StaleAfter: 300 * time.Millisecond},
		"Gear":  {Publish: true, MaxRate: 20, OnChange: true, Heartbeat: time.Second, StaleAfter: 150 * time.Millisecond},
		"Code":  {Publish: true, MaxRate: 20},
	}
	for _, s := range db.Signals {
		if got := p.Resolve(s); got != want[s.Name] {
			t.Errorf("default policy of %s = %+v, want %+v", s.Name, got, want[s.Name])
		}
	}
	counter := &dbc.Signal{Name: "MOT_StatusCounter", Message: &dbc.Message{Name: "M", CycleTime: 10 * time.Millisecond}}
	if got, want := p.Resolve(counter), (Policy{Publish: true, MaxRate: 1, StaleAfter: 30 * time.Millisecond}); got != want {
		t.Errorf("default policy of an alive counter = %+v, want %+v", got, want)
	}
	// Named in any case, as real DBCs do; a glob of one's own keeps its case.
	for _, name := range []string{"COUNTER", "CHECKSUM", "Crc", "ALIVE", "MSG_RC", "CRC8_STAT1"} {
		hk := &dbc.Signal{Name: name, Message: &dbc.Message{Name: "M", CycleTime: 10 * time.Millisecond}}
		if got := p.Resolve(hk); got.MaxRate != 1 {
			t.Errorf("default policy of %s = %+v, want a 1 Hz cap", name, got)
		}
	}
	for _, name := range []string{"SOURCE", "ARC_ANGLE", "ErrCount"} {
		other := &dbc.Signal{Name: name, Message: &dbc.Message{Name: "M", CycleTime: 10 * time.Millisecond}}
		if got := p.Resolve(other); got.MaxRate != 20 {
			t.Errorf("default policy of %s = %+v, want the 20 Hz cap", name, got)
		}
	}
	glob, err := ParsePolicy("g.yaml", []byte("rules:\n  - match: \"*Counter\"\n    max_rate: 1\n  - housekeeping: false\n    on_change: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	upper := &dbc.Signal{Name: "COUNTER", Message: &dbc.Message{Name: "M"}}
	if got := glob.Resolve(upper); got.MaxRate != 0 || got.OnChange {
		t.Errorf("a *Counter glob and housekeeping: false resolve COUNTER to %+v, want neither", got)
	}
	// The text handed out is the policy in force.
	again, err := ParsePolicy("copy.yaml", DefaultPolicyYAML())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range db.Signals {
		if again.Resolve(s) != p.Resolve(s) {
			t.Errorf("DefaultPolicyYAML resolves %s differently", s.Name)
		}
	}
}

func TestPolicyErrors(t *testing.T) {
	tests := []struct {
		yaml       string
		line       int
		key, inMsg string
	}{
		{"defaults:\n  max_rate: -1\n", 2, "max_rate", "negative"},
		{"defaults:\n  max_rate: fast\n", 2, "max_rate", `want a number, got "fast"`},
		{"defaults:\n  max_rat: 20\n", 2, "max_rat", "unknown key in defaults"},
		{"defaults:\n  match: x\n", 2, "match", "rule selector"},
		{"rules:\n  - match: \"[a\"\n", 2, "match", "bad glob"},
		{"rules:\n  - match: [1]\n", 2, "match", "want a string"},
		{"rules:\n  - unit: {a: b}\n", 2, "unit", "want a string or a list"},
		{"rules:\n  - on_change: yes please\n", 2, "on_change", "want true or false"},
		{"rules:\n  - heartbeat: 5\n", 2, "heartbeat", "with a unit"},
		{"rules:\n  - heartbeat: soon\n", 2, "heartbeat", "duration"},
		{"rules:\n  - heartbeat: -1s\n", 2, "heartbeat", "negative"},
		{"rules:\n  - deadband: .nan\n", 2, "deadband", "finite"},
		{"rules:\n  - has_values: 1\n", 2, "has_values", "true or false"},
		{"rules:\n  x: 1\n", 2, "rules", "want a list"},
		{"rules:\n  - 3\n", 2, "rules[0]", "want a mapping"},
		{"default:\n  max_rate: 1\n", 1, "default", "unknown key"},
		{"- a\n", 1, "", "want a mapping"},
		{"defaults:\n  max_rate: [1\n", 1, "", "did not find"},
		{"defaults:\n\tmax_rate: 1\n", 2, "", "cannot start any token"},
	}
	for _, tt := range tests {
		_, err := ParsePolicy("p.yaml", []byte(tt.yaml))
		var pe *PolicyError
		if !errors.As(err, &pe) || !errors.Is(err, ErrPolicy) {
			t.Errorf("ParsePolicy(%q) = %v, want a *PolicyError", tt.yaml, err)
			continue
		}
		if pe.File != "p.yaml" || pe.Line != tt.line || pe.Key != tt.key || !strings.Contains(pe.Msg, tt.inMsg) {
			t.Errorf("ParsePolicy(%q) = %q, want p.yaml line %d key %q and %q", tt.yaml, err, tt.line, tt.key, tt.inMsg)
		}
		if !strings.HasPrefix(err.Error(), "pipeline: policy p.yaml:") {
			t.Errorf("error %q does not start with the file and line", err)
		}
	}
}

func TestLoadPolicy(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(path, []byte("defaults:\n  max_rate: 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := LoadPolicy(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != path {
		t.Errorf("Name = %q, want %q", p.Name(), path)
	}
	if got := p.Resolve(testDB(t).Signals[0]).MaxRate; got != 5 {
		t.Errorf("max_rate = %v, want 5", got)
	}
	if _, err := LoadPolicy(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("LoadPolicy(missing) = %v, want an error naming the file", err)
	}
}

func TestEmptyPolicy(t *testing.T) {
	for _, src := range []string{"", "# nothing\n", "defaults:\nrules:\n"} {
		p, err := ParsePolicy("e.yaml", []byte(src))
		if err != nil {
			t.Errorf("ParsePolicy(%q): %v", src, err)
			continue
		}
		if got := p.Resolve(testDB(t).Signals[0]); got != (Policy{Publish: true}) {
			t.Errorf("empty policy %q resolves to %+v, want publish only", src, got)
		}
	}
}

func FuzzParsePolicy(f *testing.F) {
	f.Add(DefaultPolicyYAML())
	f.Add([]byte("rules:\n  - match: [a, b]\n    heartbeat: 1s\n"))
	f.Add([]byte("defaults: {max_rate: 1e308, deadband_pct: 0.5}"))
	db := testDB(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePolicy("fuzz.yaml", data)
		if err != nil {
			if !errors.Is(err, ErrPolicy) {
				t.Fatalf("error %v does not wrap ErrPolicy", err)
			}
			return
		}
		for _, s := range db.Signals {
			pol := p.Resolve(s)
			if pol.MaxRate < 0 || pol.Heartbeat < 0 || pol.StaleAfter < 0 || pol.Deadband < 0 {
				t.Fatalf("negative setting %+v", pol)
			}
		}
		if _, err := New(db, Config{Policies: p}, &recorder{t: t}); err != nil {
			t.Fatalf("New with a valid policy: %v", err)
		}
	})
}

// TestPolicyErrorsCutLongText: an error quotes at most 80 characters of
// a policy's key or value however long the text (YAML itself refuses
// control characters).
func TestPolicyErrorsCutLongText(t *testing.T) {
	big := strings.Repeat("ab", 1<<20)
	for _, tt := range []struct{ name, src, want string }{
		{"unknown top-level key", "? k" + big + "\n: 1\n", "unknown key"},
		{"unknown setting", "defaults:\n  ? x" + big + "\n  : 1\n", "unknown key"},
		{"duration", "defaults:\n  heartbeat: " + big + "\n", "want a duration"},
		{"number", "defaults:\n  deadband: " + strings.Repeat("9", 1<<20) + "e999999\n", "want a"},
		{"glob", "rules:\n  - match: \"[" + big + "\"\n    publish: false\n", "bad glob"},
	} {
		_, err := ParsePolicy("p.yaml", []byte(tt.src))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %.200v, want an error saying %q", tt.name, err, tt.want)
			continue
		}
		if s := err.Error(); len(s) > 400 {
			t.Errorf("%s: got an error of %d bytes, want at most 400: %.200q", tt.name, len(s), s)
		}
	}
}

// TestResolveByName: rules that name signals (as tune --write-policy
// writes one per signal) are looked up by name, and resolve exactly as
// every rule tried in order does, interleaved with glob, unit and
// value-table rules, a rule naming a signal twice, and names that only
// look like globs.
func TestResolveByName(t *testing.T) {
	db := testDB(t)
	var b strings.Builder
	b.WriteString("defaults:\n  max_rate: 20\nrules:\n")
	for i, s := range db.Signals {
		fmt.Fprintf(&b, "  - match: [%q, %q]\n    max_rate: %d\n", s.FullName(), s.Name, i+1)
		if i%2 == 0 {
			fmt.Fprintf(&b, "  - match: \"*\"\n    heartbeat: %dms\n    max_rate: %d\n", i+1, 1000+i)
		}
		fmt.Fprintf(&b, "  - has_values: true\n    on_change: true\n  - match: %q\n    deadband: %d\n", s.Name, i+2)
	}
	p, err := ParsePolicy("p.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range db.Signals {
		want := initial()
		want.merge(&p.defaults)
		for i := range p.rules {
			if p.rules[i].matches(s) {
				want.merge(&p.rules[i].settings)
			}
		}
		if got := p.Resolve(s); got.MaxRate != want.pol.MaxRate || got.Heartbeat != want.pol.Heartbeat ||
			got.OnChange != want.pol.OnChange || got.Deadband != want.pol.Deadband {
			t.Errorf("%s: %+v, every rule in order gives %+v", s.FullName(), got, want.pol)
		}
	}
	if len(p.others) == 0 || len(p.byName) == 0 {
		t.Errorf("index: %d rules by name, %d others; want both", len(p.byName), len(p.others))
	}
}
