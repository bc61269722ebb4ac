package scenario

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const small = `
defaults: {duration: 20s, warmup: 3s, raw_subscribers: 3, envelope_subscribers: 5}
capture: ../testdata/idle.log
loads:
  car: {label: car, speed: 1}
  flood: {label: flood, flood: true}
dbcs:
  mix8: {file: ../testdata/mix8.dbc, label: "8"}
policies:
  cap50: {file: policies/cap-50hz.yaml, label: 50 Hz}
  default: {label: default}
scenarios:
  - name: car-8-50hz
    load: car
    dbc: mix8
    policy: cap50
    report: {envelopes: 4300, deliveries: 21600, broker_cpu: 47, p50: 16, p99: 32}
  - name: flood-default
    load: flood
    dbc: mix8
    policy: default
    stream: window
    duration: 10s
    envelope_subscribers: 0
profiles:
  smoke: {duration: 4s, warmup: 1s, scenarios: [car-8-50hz]}
  all: {scenarios: [car-8-50hz, flood-default]}
`

func TestPlan(t *testing.T) {
	f, err := Parse("benchmarks/scenarios.yaml", []byte(small))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := f.Plan("all", Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("got %d runs, want 2", len(runs))
	}
	r := runs[0]
	checks := []struct {
		what      string
		got, want any
	}{
		{"scenario", r.Scenario, "car-8-50hz"},
		{"profile", r.Profile, "all"},
		{"capture", r.Capture, filepath.Join("testdata", "idle.log")},
		{"dbc file", r.DBC.File, filepath.Join("testdata", "mix8.dbc")},
		{"policy file", r.Policy.File, filepath.Join("benchmarks", "policies", "cap-50hz.yaml")},
		{"policy label", r.Policy.Label, "50 Hz"},
		{"speed", r.Load.Speed, 1.0},
		{"stream", r.Stream, StreamSignals},
		{"duration", r.Duration, 20 * time.Second},
		{"warmup", r.Warmup, 3 * time.Second},
		{"raw subscribers", r.RawSubscribers, 3},
		{"envelope subscribers", r.EnvelopeSubscribers, 5},
		{"report p99", r.Report.P99, 32.0},
		{"2: policy file", runs[1].Policy.File, ""},
		{"2: stream", runs[1].Stream, StreamWindow},
		{"2: duration", runs[1].Duration, 10 * time.Second},
		{"2: envelope subscribers", runs[1].EnvelopeSubscribers, 0},
		{"2: flood", runs[1].Load.Flood, true},
		{"2: report", runs[1].Report == nil, true},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
}

func TestPlanOverrides(t *testing.T) {
	f, err := Parse("s.yaml", []byte(small))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := f.Plan("smoke", Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := runs[0].Duration, 4*time.Second; got != want {
		t.Errorf("profile duration: got %v, want %v", got, want)
	}
	runs, err = f.Plan("smoke", Overrides{Duration: 7 * time.Second, Stream: StreamWindow})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := runs[0].Duration, 7*time.Second; got != want {
		t.Errorf("flag duration: got %v, want %v", got, want)
	}
	if got, want := runs[0].Warmup, time.Second; got != want {
		t.Errorf("profile warm-up: got %v, want %v", got, want)
	}
	if got, want := runs[0].Stream, StreamWindow; got != want {
		t.Errorf("flag stream: got %v, want %v", got, want)
	}
	// A scenario name plans that scenario alone.
	runs, err = f.Plan("flood-default", Overrides{})
	if err != nil || len(runs) != 1 || runs[0].Scenario != "flood-default" {
		t.Errorf("Plan(scenario name) = %v, %v; want the one scenario", runs, err)
	}
	if _, err := f.Plan("nope", Overrides{}); !errors.Is(err, ErrUnknownProfile) {
		t.Errorf("Plan(unknown) error = %v, want ErrUnknownProfile", err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(string) string
		wantMsg string
		line    int
	}{
		{"unknown key", func(s string) string { return strings.Replace(s, "capture:", "captur:", 1) }, "field captur not found", 0},
		{"unknown dbc", func(s string) string {
			return strings.Replace(s, "dbc: mix8\n    policy: cap50", "dbc: mix4\n    policy: cap50", 1)
		}, `scenario "car-8-50hz": unknown dbc "mix4"`, 13},
		{"unknown policy", func(s string) string { return strings.Replace(s, "policy: default", "policy: cap99", 1) }, `scenario "flood-default": unknown policy "cap99"`, 18},
		{"unknown load", func(s string) string { return strings.Replace(s, "load: flood", "load: bus", 1) }, `unknown load "bus"`, 18},
		{"bad stream", func(s string) string { return strings.Replace(s, "stream: window", "stream: all", 1) }, `stream "all"`, 18},
		{"duplicate", func(s string) string { return strings.Replace(s, "name: flood-default", "name: car-8-50hz", 1) }, "declared twice", 0},
		{"profile scenario", func(s string) string { return strings.Replace(s, "[car-8-50hz]", "[car-9]", 1) }, `profile "smoke": unknown scenario "car-9"`, 0},
		{"bad duration", func(s string) string { return strings.Replace(s, "duration: 10s", "duration: 10", 1) }, `duration "10"`, 0},
		{"zero speed", func(s string) string { return strings.Replace(s, "speed: 1", "speed: 0", 1) }, "load car: speed 0", 0},
		{"no capture", func(s string) string { return strings.Replace(s, "capture: ../testdata/idle.log", "", 1) }, "no capture", 0},
		{"empty", func(string) string { return "" }, "s.yaml: the file is empty: no capture and no scenarios", 0},
		{"only a comment", func(string) string { return "# nothing\n" }, "the file is empty", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(tt.edit(small)))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse error = %v, want *Error", err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error = %q, want it to contain %q", err, tt.wantMsg)
			}
			if tt.line > 0 && e.Line != tt.line {
				t.Errorf("error line = %d, want %d", e.Line, tt.line)
			}
		})
	}
}

// TestRepositoryFile checks the scenarios file the bench ships with.
func TestRepositoryFile(t *testing.T) {
	path := filepath.Join("..", "..", "benchmarks", "scenarios.yaml")
	f, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"smoke", "mix", "full", "stress"} {
		runs, err := f.Plan(p, Overrides{})
		if err != nil {
			t.Fatalf("profile %s: %v", p, err)
		}
		for _, r := range runs {
			for _, file := range []string{r.Capture, r.DBC.File, r.Policy.File} {
				if file == "" {
					continue
				}
				if _, err := os.Stat(file); err != nil && !strings.Contains(file, "testdata") {
					t.Errorf("profile %s, scenario %s: %v", p, r.Scenario, err)
				}
			}
		}
		if p == "smoke" {
			if got := Estimate(runs, 1); got >= time.Minute {
				t.Errorf("smoke profile takes %v, want under a minute", got)
			}
		}
	}
	// The mix profile carries the report's ten rows.
	runs, _ := f.Plan("mix", Overrides{})
	var withReport int
	for _, r := range runs {
		if r.Report != nil {
			withReport++
		}
	}
	if withReport != 10 {
		t.Errorf("mix profile has %d rows with the report's figures, want 10", withReport)
	}
}

func TestWritePlan(t *testing.T) {
	f, err := Parse("benchmarks/scenarios.yaml", []byte(small))
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := f.Plan("all", Overrides{})
	var buf bytes.Buffer
	if err := WritePlan(&buf, "all", runs, 3); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	// (3s + 20s + overhead) + (3s + 10s + overhead), three times.
	want := 3 * (36*time.Second + 2*RunOverhead)
	for _, s := range []string{"profile all: 2 scenarios, each run 3 time(s)", "car-8-50hz", "car (1×)", "flood (flood)", "(service default)", "estimated time: " + want.String()} {
		if !strings.Contains(out, s) {
			t.Errorf("plan lacks %q:\n%s", s, out)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(small))
	f.Add([]byte("capture: x\nscenarios: [{name: a}]\n"))
	f.Add([]byte("defaults: {duration: -1s}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Parse("f.yaml", b)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse error %v is not a *Error", err)
			}
			return
		}
		// A valid file plans every profile without error.
		for _, p := range file.ProfileNames() {
			runs, err := file.Plan(p, Overrides{})
			if err != nil {
				t.Fatalf("Plan(%s) of a valid file: %v", p, err)
			}
			for _, r := range runs {
				if r.Duration <= 0 || r.Warmup <= 0 {
					t.Fatalf("Plan(%s): run %s has duration %v, warm-up %v", p, r.Scenario, r.Duration, r.Warmup)
				}
			}
		}
	})
}

// TestParseErrorsCutLongText: an error quotes at most 80 characters of a
// name or value of the file however long.
func TestParseErrorsCutLongText(t *testing.T) {
	big := strings.Repeat("ab", 1<<20)
	for _, tt := range []struct{ name, old, new string }{
		{"dbc", "dbc: mix8\n    policy: cap50", "dbc: " + big + "\n    policy: cap50"},
		{"load", "load: flood", "load: " + big},
		{"stream", "stream: window", "stream: " + big},
		{"duration", "duration: 10s", "duration: " + big},
		{"profile scenario", "[car-8-50hz]", "[" + big + "]"},
		{"scenario name", "name: flood-default", "name: \"\\e[2J" + big + "\""},
	} {
		_, err := Parse("s.yaml", []byte(strings.Replace(small, tt.old, tt.new, 1)))
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		if s := err.Error(); len(s) > 600 || strings.Contains(s, "\x1b") {
			t.Errorf("%s: got an error of %d bytes, want at most 600 and no ESC: %.200q", tt.name, len(s), s)
		}
	}
}

// TestNamesPrintable: a name with a control character (YAML's "\e") is
// refused, since names are printed as they are.
func TestNamesPrintable(t *testing.T) {
	_, err := Parse("s.yaml", []byte(strings.Replace(small, "name: flood-default", `name: "flood\e[2J"`, 1)))
	if err == nil || !strings.Contains(err.Error(), `name "flood\x1b[2J": want printable text`) {
		t.Errorf("got %v, want the name refused", err)
	}
}
