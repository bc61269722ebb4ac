package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yukart/candec/internal/cmdkit/cli"
	"github.com/yukart/candec/internal/testkit/realdata"
)

const (
	tuneDBC  = "../../testdata/yukart.dbc"
	tuneIdle = "../../testdata/idle.log"
)

// TestTuneWritePolicy: `tune --write-policy` writes a policy file with a
// comment line per rule, and `tune --policy` of that file reproduces the
// deliveries and the error it predicted.
func TestTuneWritePolicy(t *testing.T) {
	out := filepath.Join(t.TempDir(), "opt.yaml")
	var plan struct {
		Worst      float64 `json:"worst_deliveries_per_s"`
		TotalError float64 `json:"total_error"`
		Met        bool    `json:"budget_met"`
	}
	runJSON(t, &plan, "tune", "--dbc", tuneDBC, "--budget", "3000", "--write-policy", out, "--json", tuneIdle)
	var rep struct {
		Deliveries float64 `json:"deliveries_per_s"`
		TotalError float64 `json:"total_error"`
		MissedEnum uint64  `json:"missed_enum_transitions"`
	}
	runJSON(t, &rep, "tune", "--dbc", tuneDBC, "--policy", out, "--json", tuneIdle)
	if !plan.Met || plan.Worst > 3000 || plan.TotalError == 0 {
		t.Errorf("plan: met %v, %.1f deliveries/s, error %g: want met within 3000 with some error", plan.Met, plan.Worst, plan.TotalError)
	}
	if math.Abs(rep.Deliveries-plan.Worst) > 1e-6 || math.Abs(rep.TotalError-plan.TotalError) > 1e-9 || rep.MissedEnum != 0 {
		t.Errorf("tune --policy: %.6f deliveries/s, error %.9g, %d enum transitions missed; the plan said %.6f, %.9g, 0",
			rep.Deliveries, rep.TotalError, rep.MissedEnum, plan.Worst, plan.TotalError)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rules, comments := strings.Count(string(data), "\n  - match: "), strings.Count(string(data), "\n  # ")
	if rules != 149 || comments != rules {
		t.Errorf("%d rules, %d comment lines: want one of each per signal (149)", rules, comments)
	}
}

func runJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &out, Stderr: &errOut}, args); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	if err := json.Unmarshal(out.Bytes(), v); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
}

// TestTuneOptimizeBadInput: each is refused with what and where, exit
// status not 0, and no policy file written; an old one is kept.
func TestTuneOptimizeBadInput(t *testing.T) {
	dir := t.TempDir()
	unknown := filepath.Join(dir, "unknown.log")
	if err := os.WriteFile(unknown, []byte("(1.0) can0 7FF#00\n(2.0) can0 7FE#00\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "opt.yaml")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"budget 0", []string{"--budget", "0", tuneIdle}, "tune: --budget must be a number of deliveries/s more than 0, got 0"},
		{"budget -1", []string{"--budget", "-1", tuneIdle}, "got -1"},
		{"no decodable signal", []string{tuneIdle, unknown}, "tune: capture holds no decodable signal: " + unknown + " (2 frames)"},
		{"keep matches nothing", []string{"--keep", "NOPE_*", tuneIdle}, `tune: bad pin: keep: glob "NOPE_*" matches no signal of the DBC`},
		{"min rate not a number", []string{"--min-rate", "MOT_*=fast", tuneIdle}, `tune: --min-rate "MOT_*=fast": want [GLOB=]HZ`},
		{"max lag matches nothing", []string{"--max-lag", "X*=1s", tuneIdle}, `max lag: glob "X*" matches no signal`},
		{"stdin", []string{"-"}, "name files, not standard input"},
		{"DBCs disagree", []string{tuneIdle, tuneIdle + "=../../testdata/mix3.dbc"}, "tune: the captures' DBCs disagree: ../../testdata/yukart.dbc (for ../../testdata/idle.log) has "},
		{"output is the capture", []string{"--write-policy", tuneIdle, tuneIdle}, "tune: --write-policy:"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(out, []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"tune", "--dbc", tuneDBC, "--write-policy", out}, tt.args...)
			var stdout bytes.Buffer
			err := run(context.Background(), cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &bytes.Buffer{}}, args)
			if err == nil || !strings.Contains(err.Error(), tt.want) || cli.ExitCode(err) == 0 {
				t.Errorf("got %v (exit %d), want an error containing %q", err, cli.ExitCode(err), tt.want)
			}
			checkOld(t, out, dir)
		})
	}
	err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}, []string{"tune", "--dbc", tuneDBC, tuneIdle, tuneIdle})
	if err == nil || !strings.Contains(err.Error(), "several only with --write-policy") {
		t.Errorf("two captures without --write-policy: %v", err)
	}
	err = run(context.Background(), cli.Env{Stdin: nil, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}, []string{"tune", "--dbc", tuneDBC, "--keep", "MOT_*", tuneIdle})
	if err == nil || cli.ExitCode(err) != 2 || !strings.Contains(err.Error(), "tune: --keep works only with --write-policy") {
		t.Errorf("--keep without --write-policy: %v", err)
	}
	// DBCs that agree: the same file, given for one capture only.
	err = run(context.Background(), cli.Env{Stdin: nil, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}},
		[]string{"tune", "--dbc", tuneDBC, "--write-policy", out, tuneIdle, tuneIdle + "=" + tuneDBC})
	if err != nil {
		t.Errorf("captures whose DBCs agree: %v", err)
	}
}

// checkOld fails unless out still holds "old" and dir nothing else but
// the test's own files.
func checkOld(t *testing.T, out, dir string) {
	t.Helper()
	if data, err := os.ReadFile(out); err != nil || string(data) != "old\n" {
		t.Errorf("%s: %q, %v; want the old file kept", out, data, err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if n := e.Name(); n != "opt.yaml" && n != "unknown.log" {
			t.Errorf("left behind: %s", n)
		}
	}
}

// TestTuneOptimizeInterrupt: an interrupt leaves no half-written policy
// file: the old one stays, and no temporary file is left.
func TestTuneOptimizeInterrupt(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "opt.yaml")
	if err := os.WriteFile(out, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := run(ctx, cli.Env{Stdin: nil, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}, []string{"tune", "--dbc", tuneDBC, "--write-policy", out, tuneIdle})
	if err == nil || cli.ExitCode(err) == 0 {
		t.Errorf("interrupted: %v (exit %d), want an error", err, cli.ExitCode(err))
	}
	checkOld(t, out, dir)
}

// TestTuneBudgetTooSmall: the least-cost policy is written, and the exit
// status and message say the budget is not met.
func TestTuneBudgetTooSmall(t *testing.T) {
	out := filepath.Join(t.TempDir(), "opt.yaml")
	var stdout bytes.Buffer
	err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &stdout, Stderr: &bytes.Buffer{}}, []string{"tune", "--dbc", tuneDBC, "--budget", "10", "--write-policy", out, tuneIdle})
	if err == nil || cli.ExitCode(err) != 1 || !strings.Contains(err.Error(), "tune: the budget of 10 deliveries/s cannot be met: the least-cost policy needs") {
		t.Errorf("got %v (exit %d), want exit 1 saying the budget cannot be met", err, cli.ExitCode(err))
	}
	data, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(data), "The budget cannot be met: this is the least-cost policy") {
		t.Errorf("%s: %v, want the least-cost policy, saying so:\n%.300s", out, err, data)
	}
	if !strings.Contains(stdout.String(), "NOT met") {
		t.Errorf("report does not say the budget is not met:\n%s", stdout.String())
	}
}

// BenchmarkTuneWritePolicy and BenchmarkDecodePolicy time the optimizer
// and decode --policy of the same capture (5 minutes of the drive
// scenario), end to end as the commands run; the goal is the first
// within 10× the second. docs/tuning.md gives the figures.
func BenchmarkTuneWritePolicy(b *testing.B) {
	capt := benchCapture(b)
	out := filepath.Join(b.TempDir(), "opt.yaml")
	benchRun(b, "tune", "--dbc", tuneDBC, "--write-policy", out, capt)
}

func BenchmarkDecodePolicy(b *testing.B) {
	capt := benchCapture(b)
	out := filepath.Join(b.TempDir(), "out.txt")
	benchRun(b, "decode", "--dbc", tuneDBC, "--policy", "default", "-o", out, capt)
}

func benchCapture(b *testing.B) string {
	b.Helper()
	capt := filepath.Join(b.TempDir(), "drive.log")
	args := []string{"generate", "--dbc", tuneDBC, "--scenario", "drive", "--duration", "5m", "-o", capt}
	if err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}, args); err != nil {
		b.Fatal(err)
	}
	return capt
}

func benchRun(b *testing.B, args ...string) {
	for b.Loop() {
		if err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}, args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTuneWritePolicyRAV4 and BenchmarkDecodePolicyRAV4: the same
// pair on a real drive, the powertrain bus of the shared RAV4 log with
// its DBC (skipped without the shared data). docs/tuning.md gives the
// figures.
func BenchmarkTuneWritePolicyRAV4(b *testing.B) {
	dbcFile, capt := rav4Bench(b)
	out := filepath.Join(b.TempDir(), "opt.yaml")
	benchRun(b, "tune", "--dbc", dbcFile, "--topic-template", "car/{message}/{signal}", "--budget", "3000", "--write-policy", out, capt)
}

func BenchmarkDecodePolicyRAV4(b *testing.B) {
	dbcFile, capt := rav4Bench(b)
	out := filepath.Join(b.TempDir(), "out.txt")
	benchRun(b, "decode", "--dbc", dbcFile, "--topic-template", "car/{message}/{signal}", "--policy", "default", "-o", out, capt)
}

// rav4Bench is the Toyota powertrain DBC and the can0 frames of the
// shared RAV4 log, written to a temporary file.
func rav4Bench(b *testing.B) (dbcFile, capt string) {
	b.Helper()
	dir := realdata.Dir(b)
	data, err := os.ReadFile(filepath.Join(dir, "logs", "rav4_2017_highway_1min.log"))
	if err != nil {
		b.Fatal(err)
	}
	var keep strings.Builder
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if strings.Contains(l, " can0 ") {
			keep.WriteString(l)
		}
	}
	capt = filepath.Join(b.TempDir(), "rav4-can0.log")
	if err := os.WriteFile(capt, []byte(keep.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return filepath.Join(dir, "dbc", "toyota_new_mc_pt_generated.dbc"), capt
}
