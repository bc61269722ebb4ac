package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/benchmarks/report"
	"github.com/yukart/candec/internal/cmdkit/cli"
	"github.com/yukart/candec/internal/cmdkit/outfile"
	"github.com/yukart/candec/internal/lab/chart/charttest"
)

const scenariosFile = "../../benchmarks/scenarios.yaml"

func TestBenchPlanOnly(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &out, Stderr: &bytes.Buffer{}},
		[]string{"bench", "--scenarios", scenariosFile, "--profile", "mix", "--repeat", "3", "--plan-only"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"profile mix: 15 scenarios, each run 3 time(s)", "fullbus-8-none", "car-yukart-default", "car-yukart-optimized", "(service default)", "estimated time: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, out.String())
		}
	}
	err = run(context.Background(), cli.Env{Stdin: nil, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}},
		[]string{"bench", "--scenarios", scenariosFile, "--profile", "nope", "--plan-only"})
	if err == nil || cli.ExitCode(err) != 2 {
		t.Errorf("unknown profile: %v (exit %d), want exit status 2", err, cli.ExitCode(err))
	}
}

func TestBenchSummary(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	for i, env := range []float64{4200, 4300, 4400} {
		r := report.Result{Scenario: "car-8-50hz", Profile: "mix", Host: "desk", Time: t0.Add(time.Duration(i) * time.Minute),
			Load: "car", Signals: "8", Cap: "50 Hz", Stream: "signals", EnvelopeSubscribers: 5, Envelopes: env, Deliveries: env * 5}
		if _, err := report.AppendFile(dir, &r); err != nil {
			t.Fatal(err)
		}
	}
	var stderr bytes.Buffer
	err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &bytes.Buffer{}, Stderr: &stderr},
		[]string{"bench", "summary", "--scenarios", scenariosFile, "--results", dir, "--host", "desk"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "baseline-desk.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Bench baseline: desk", "| car-8-50hz | car | 8 | 50 Hz | signals | 4,300 | 21,500 |", "| car-8-50hz | 4,300 → 4,300 |",
		"](baseline-desk-latency.svg)", "](baseline-desk-deliveries.svg)"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("baseline lacks %q:\n%s", want, b)
		}
	}
	// The charts beside it, which it embeds.
	for _, name := range []string{"baseline-desk-latency.svg", "baseline-desk-deliveries.svg"} {
		svg, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("bench summary wrote no %s: %v", name, err)
			continue
		}
		charttest.Check(t, svg, "car-8-50hz")
	}
	err = run(context.Background(), cli.Env{Stdin: nil, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}},
		[]string{"bench", "summary", "--scenarios", scenariosFile, "--results", dir, "--host", "other"})
	if err == nil {
		t.Error("summary of a host without results: nil error, want one")
	}
}

// appendRuns appends one run of scenario per envelopes figure to dir's
// results of host desk, a minute apart from at.
func appendRuns(t *testing.T, dir, profile, scenario string, at time.Time, envs ...float64) {
	t.Helper()
	for i, env := range envs {
		r := report.Result{Scenario: scenario, Profile: profile, Host: "desk", Time: at.Add(time.Duration(i) * time.Minute),
			Load: "car", Signals: "8", Cap: "50 Hz", Stream: "signals", EnvelopeSubscribers: 5, Envelopes: env, Deliveries: env * 5}
		if _, err := report.AppendFile(dir, &r); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBenchSummaryProfile: a results file holds the mix baseline's runs
// and, later, smoke and stress runs; the summary takes the mix runs only
// unless told otherwise.
func TestBenchSummaryProfile(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	appendRuns(t, dir, "mix", "car-8-50hz", t0, 4200, 4300, 4400)
	appendRuns(t, dir, "smoke", "car-8-50hz", t0.Add(time.Hour), 9000, 9100) // short runs that would move the median
	appendRuns(t, dir, "stress", "flood-8-none-window", t0.Add(2*time.Hour), 200)

	tests := []struct {
		name      string
		args      []string
		want      []string
		notWant   []string
		wantError string
	}{
		{"default is mix", nil,
			[]string{"| car-8-50hz | car | 8 | 50 Hz | signals | 4,300 | 21,500 |", "median of its last 3 runs of profile mix",
				"`candec bench summary --profile mix --host desk", "| 3 |\n"},
			[]string{"flood-8-none-window", "9,000", "9,100"}, ""},
		{"smoke", []string{"--profile", "smoke"},
			[]string{"| car-8-50hz | car | 8 | 50 Hz | signals | 9,050 |", "of profile smoke", "| 2 |\n"},
			[]string{"flood", "| 4,300 |"}, ""},
		{"last 1", []string{"--last", "1"},
			[]string{"| car-8-50hz | car | 8 | 50 Hz | signals | 4,400 |", "median of its last 1 runs of profile mix", "--last 1"},
			nil, ""},
		{"unknown profile", []string{"--profile", "full"}, nil, nil,
			"bench summary: no runs of profile full for host desk in " + dir + " (it has runs of: mix, smoke, stress; choose with --profile)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			args := append([]string{"bench", "summary", "--scenarios", scenariosFile, "--results", dir, "--host", "desk", "-o", "-"}, tt.args...)
			err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &out, Stderr: &bytes.Buffer{}}, args)
			if tt.wantError != "" {
				if err == nil || err.Error() != tt.wantError {
					t.Fatalf("got error %v, want %q", err, tt.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("summary lacks %q:\n%s", w, out.String())
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out.String(), w) {
					t.Errorf("summary has %q:\n%s", w, out.String())
				}
			}
		})
	}
}

// TestBenchSummaryOutput: the baseline is replaced only by a summary
// written in full, and never written over one of the summary's inputs.
func TestBenchSummaryOutput(t *testing.T) {
	t0 := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	const old = "the old baseline\n"
	failHalfway := func(w io.Writer, s report.Summary, m report.Meta) error {
		io.WriteString(w, "# Bench baseline: half of it")
		return errors.New("disk full")
	}
	tests := []struct {
		name     string
		out      func(dir string) string // -o; "" for the default
		write    func(io.Writer, report.Summary, report.Meta) error
		wantErr  error // nil: success
		wantExit int
		wantBase string // what baseline-desk.md holds afterwards: "new" for a fresh summary
	}{
		{"replaces the baseline", func(string) string { return "" }, nil, nil, 0, "new"},
		{"a failed write leaves the old baseline", func(string) string { return "" }, failHalfway, errors.New("disk full"), 1, old},
		{"output is a results file", func(dir string) string { return filepath.Join(dir, "desk-2026-11-03.jsonl") }, nil, outfile.ErrSameFile, 2, old},
		{"output is the scenarios file", func(dir string) string { return filepath.Join(dir, "scenarios.yaml") }, nil, outfile.ErrSameFile, 2, old},
	}
	scen, err := os.ReadFile(scenariosFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			appendRuns(t, dir, "mix", "car-8-50hz", t0, 4200, 4300, 4400)
			scenarios := filepath.Join(dir, "scenarios.yaml")
			if err := os.WriteFile(scenarios, scen, 0o644); err != nil {
				t.Fatal(err)
			}
			baseline := filepath.Join(dir, "baseline-desk.md")
			if err := os.WriteFile(baseline, []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, dir)
			if tt.write != nil {
				writeMarkdown = tt.write
				defer func() { writeMarkdown = report.WriteMarkdown }()
			}
			args := []string{"bench", "summary", "--scenarios", scenarios, "--results", dir, "--host", "desk"}
			if o := tt.out(dir); o != "" {
				args = append(args, "-o", o)
			}
			err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}, args)
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("got error %v, want none", err)
			case tt.wantErr != nil && (err == nil || !errors.Is(err, tt.wantErr) && !strings.Contains(err.Error(), tt.wantErr.Error())):
				t.Fatalf("got error %v, want %v", err, tt.wantErr)
			case err != nil && cli.ExitCode(err) != tt.wantExit:
				t.Errorf("got exit status %d, want %d", cli.ExitCode(err), tt.wantExit)
			}
			after := snapshot(t, dir)
			for name, b := range before {
				if name == "baseline-desk.md" {
					continue
				}
				if after[name] != b {
					t.Errorf("%s changed:\n%.200s", name, after[name])
				}
			}
			want := len(before)
			if tt.wantBase == "new" {
				want += 2 // latency and deliveries beside it (these runs measured no broker µs per delivery: no broker chart)
			}
			if len(after) != want {
				t.Errorf("files after: %d, want %d (no temporary file left)", len(after), want)
			}
			got := after["baseline-desk.md"]
			if tt.wantBase == "new" {
				if !strings.HasPrefix(got, "# Bench baseline: desk\n") {
					t.Errorf("baseline = %.80q, want a new summary", got)
				}
			} else if got != tt.wantBase {
				t.Errorf("baseline = %.80q, want %q", got, tt.wantBase)
			}
		})
	}
}

// snapshot returns the contents of every file in dir by name.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, e := range es {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = string(b)
	}
	return m
}

// TestBenchFlagRanges: a numeric flag out of range is refused with exit
// status 2 and a message naming the flag and what it allows, rather than
// quietly becoming the default.
func TestBenchFlagRanges(t *testing.T) {
	tests := []struct {
		args []string
		want string // "" accepted
	}{
		{[]string{"--repeat", "0"}, "bench: --repeat 0: must be 1 to 100"},
		{[]string{"--repeat", "-2"}, "bench: --repeat -2: must be 1 to 100"},
		{[]string{"--repeat", "101"}, "bench: --repeat 101: must be 1 to 100"},
		{[]string{"--repeat", "100"}, ""},
		{[]string{"--duration", "-1s"}, "bench: --duration -1s: must be > 0, such as 20s (leave it out for the scenarios file's)"},
		{[]string{"--duration", "0"}, "bench: --duration 0s: must be > 0, such as 20s (leave it out for the scenarios file's)"},
		{[]string{"--duration", "2s"}, ""},
		{[]string{"--warmup", "-1ms"}, "bench: --warmup -1ms: must be > 0, such as 3s (leave it out for the scenarios file's)"},
		{[]string{"--warmup", "0s"}, "bench: --warmup 0s: must be > 0, such as 3s (leave it out for the scenarios file's)"},
		{[]string{"--warmup", "500ms"}, ""},
		{[]string{"--broker-pid", "-1", "--broker", "mqtt://127.0.0.1:1883"}, "bench: --broker-pid -1: must be a process ID > 0"},
		{[]string{"--broker-pid", "0", "--broker", "mqtt://127.0.0.1:1883"}, "bench: --broker-pid 0: must be a process ID > 0"},
		{[]string{"--broker-pid", "42"}, "bench: --broker-pid 42: needs --broker: without it the bench measures the mosquitto it starts"},
		{[]string{"--broker-pid", "42", "--broker", "mqtt://127.0.0.1:1883"}, ""},
		{[]string{"--host", "../x"}, `bench: host "../x": must be letters, digits, '-', '_' and '.', not starting with '.' or '-' (--host or $CANDEC_BENCH_HOST)`},
		{[]string{"--host", "a*"}, `bench: host "a*": must be letters, digits, '-', '_' and '.', not starting with '.' or '-' (--host or $CANDEC_BENCH_HOST)`},
		{[]string{"--host", "desk-2.lan_1"}, ""},
		{[]string{"summary", "--host", "a/b"}, `bench summary: host "a/b": must be letters, digits, '-', '_' and '.', not starting with '.' or '-' (--host or $CANDEC_BENCH_HOST)`},
		{[]string{"summary", "--last", "0"}, "bench summary: --last 0: must be at least 1"},
		{[]string{"summary", "--last", "-3"}, "bench summary: --last -3: must be at least 1"},
		{[]string{"summary", "--profile", ""}, `bench summary: --profile "": must name a profile, such as mix`},
	}
	for _, tt := range tests {
		args := append([]string{"bench"}, tt.args...)
		if args[1] != "summary" {
			args = append(args, "--scenarios", scenariosFile, "--plan-only")
		}
		err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}, args)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%v: got %v, want it accepted", tt.args, err)
		case tt.want == "":
		case err == nil:
			t.Errorf("%v: got no error, want %q", tt.args, tt.want)
		case err.Error() != tt.want || cli.ExitCode(err) != 2:
			t.Errorf("%v: got %q (exit %d), want %q (exit 2)", tt.args, err, cli.ExitCode(err), tt.want)
		}
	}
}

func TestHostName(t *testing.T) {
	t.Setenv(hostEnv, "bench-box")
	if got := hostName(""); got != "bench-box" {
		t.Errorf("hostName with $%s = %q, want bench-box", hostEnv, got)
	}
	if got := hostName("flag"); got != "flag" {
		t.Errorf("hostName(flag) = %q, want flag", got)
	}
	t.Setenv(hostEnv, "")
	if got := hostName(""); got == "" || strings.Contains(got, ".") {
		t.Errorf("hostName() = %q, want the machine's short name", got)
	}
}

func TestTuneCommand(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &out, Stderr: &bytes.Buffer{}},
		[]string{"tune", "--dbc", "../../testdata/mix8.dbc", "--policy", "../../benchmarks/policies/cap-20hz.yaml", "--subscribers", "5", "--top", "3", "../../testdata/idle.log"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"policy: ../../benchmarks/policies/cap-20hz.yaml", "891 frames/s", "deliveries/s to 5 all-signal subscribers", "top 3 of 216 signals", "cap 20 Hz"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("tune output lacks %q:\n%s", want, out.String())
		}
	}
	err = run(context.Background(), cli.Env{Stdin: nil, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}, []string{"tune"})
	if err == nil || cli.ExitCode(err) != 2 {
		t.Errorf("tune without a capture: %v, want exit status 2", err)
	}
}

// TestBenchEmptyScenarios: an empty scenarios file is said to be empty,
// named by its flag, not reported as "EOF"; /dev/null is refused as the
// device it is.
func TestBenchEmptyScenarios(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.yaml")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ file, want string }{
		{empty, "--scenarios: " + empty + ": the file is empty: no capture and no scenarios"},
		{os.DevNull, "--scenarios: scenario: " + os.DevNull + " is a device, not a regular file"},
	} {
		for _, args := range [][]string{{"bench", "--plan-only"}, {"bench", "summary"}} {
			err := run(context.Background(), cli.Env{Stdin: nil, Stdout: io.Discard, Stderr: io.Discard}, append(args, "--scenarios", tt.file))
			if cli.ExitCode(err) != 1 || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("candec %s --scenarios %s: got %v (status %d), want status 1 with %q", strings.Join(args, " "), tt.file, err, cli.ExitCode(err), tt.want)
			}
		}
	}
}
