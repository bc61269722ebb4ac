package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yukart/candec/internal/cmdkit/cli"
	"github.com/yukart/candec/internal/lab/chart/charttest"
	"github.com/yukart/candec/internal/testkit/realdata"
)

// TestTuneBadFlags: a count out of range is refused with the flag's name
// and range, not silently replaced by the default.
func TestTuneBadFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--subscribers", "0"}, "tune: --subscribers must be 1 or more, got 0"},
		{[]string{"--subscribers", "-5"}, "tune: --subscribers must be 1 or more, got -5"},
		{[]string{"--top", "-1"}, "tune: --top must be 0 (all signals) or more, got -1"},
		{[]string{"--topic-template", "car/{signl}"}, `unknown placeholder "{signl}"`},
	} {
		args := append(append([]string{"tune", "--dbc", "../../testdata/yukart.dbc"}, tt.args...), "../../testdata/idle.log")
		var out bytes.Buffer
		err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &out, Stderr: &bytes.Buffer{}}, args)
		if err == nil || !strings.Contains(err.Error(), tt.want) || cli.ExitCode(err) == 0 {
			t.Errorf("tune %s: %v (exit %d), want an error containing %q", strings.Join(tt.args, " "), err, cli.ExitCode(err), tt.want)
		}
		if out.Len() != 0 {
			t.Errorf("tune %s wrote a report:\n%s", strings.Join(tt.args, " "), out.String())
		}
	}
}

// TestTuneInput: the capture is a file or standard input ("-"); one that
// cannot be read is an error naming it.
func TestTuneInput(t *testing.T) {
	data, err := os.ReadFile("../../testdata/idle.log")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, stdin, arg, want string
	}{
		{"stdin", string(data), "-", ""},
		{"stdin of no known format", "hello\n", "-", `tune: stdin: capture: unknown format: its first line is "hello"`},
		{"empty stdin", "", "-", "tune: capture holds no frame"},
		{"file of no known format", "", notes, "tune: " + notes + ": capture: unknown format"},
		{"directory", "", dir, "tune: capture: " + dir + " is a directory, not a capture"},
		{"missing", "", filepath.Join(dir, "none.log"), "tune: open " + filepath.Join(dir, "none.log") + ": no such file or directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(context.Background(), cli.Env{Stdin: strings.NewReader(tt.stdin), Stdout: &out, Stderr: &bytes.Buffer{}}, []string{"tune", "--dbc", "../../testdata/yukart.dbc", tt.arg})
			if tt.want == "" {
				if err != nil || !strings.Contains(out.String(), "policy: default") {
					t.Fatalf("got %v, want a report:\n%s", err, out.String())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || cli.ExitCode(err) == 0 {
				t.Errorf("got %v (exit %d), want an error containing %q", err, cli.ExitCode(err), tt.want)
			}
		})
	}
}

// TestTuneTopicTemplate: the Toyota DBCs repeat signal names across
// messages; tune names every clash, and runs with {message} in the
// template, as decode --policy and the service do.
func TestTuneTopicTemplate(t *testing.T) {
	dir := realdata.Dir(t)
	data, err := os.ReadFile(filepath.Join(dir, "logs", "rav4_2017_highway_1min.log"))
	if err != nil {
		t.Fatal(err)
	}
	capt := filepath.Join(t.TempDir(), "rav4.log")
	if err := os.WriteFile(capt, []byte(strings.Join(strings.SplitAfter(string(data), "\n")[:5000], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ dbc, clashes string }{
		{"toyota_new_mc_pt_generated.dbc", `on 20 topics`},
		{"toyota_adas.dbc", `on 9 topics`},
	} {
		args := []string{"tune", "--dbc", filepath.Join(dir, "dbc", tt.dbc), capt}
		err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}, args)
		if err == nil || !strings.Contains(err.Error(), tt.clashes) {
			t.Errorf("tune %s: %v, want every clash (%s)", tt.dbc, err, tt.clashes)
		}
		var out bytes.Buffer
		args = []string{"tune", "--dbc", filepath.Join(dir, "dbc", tt.dbc), "--topic-template", "car/{message}/{signal}", "--top", "1", capt}
		if err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &out, Stderr: &bytes.Buffer{}}, args); err != nil {
			t.Errorf("tune %s --topic-template: %v", tt.dbc, err)
		}
		if !strings.Contains(out.String(), "top 1 of") {
			t.Errorf("tune %s --topic-template: no report:\n%s", tt.dbc, out.String())
		}
	}
}

// TestTuneClockLine: the report says which frames the clock dropped, and
// its duration is not stretched by them.
func TestTuneClockLine(t *testing.T) {
	data, err := os.ReadFile("../../testdata/idle.log")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")[:2000]
	capt := filepath.Join(t.TempDir(), "c.log")
	body := strings.Join(lines[:1000], "") + "(7258118400.000000) can0 0A0#FA0007002C00F198\n" + strings.Join(lines[1000:], "")
	if err := os.WriteFile(capt, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &out, Stderr: &bytes.Buffer{}}, []string{"tune", "--dbc", "../../testdata/yukart.dbc", capt}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"capture: 2,001 frames in 2.2 s", "\nclock: 1 future dropped\n", "envelopes/s: 1,103 "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// TestTuneSVG: --svg draws the chart beside the text report, written
// whole or not at all; a bad budget, a picture of an unknown format and
// an output that is an input are refused before anything is read.
func TestTuneSVG(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "tune.svg")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &stdout, Stderr: &stderr}, []string{"tune", "--dbc", "../../testdata/yukart.dbc",
		"--policy", "../../benchmarks/policies/cap-20hz.yaml", "--budget", "10000", "--svg", out, "../../testdata/idle.log"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "deliveries/s to 5 all-signal subscribers") {
		t.Errorf("no text report with --svg:\n%s", stdout.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	charttest.Check(t, b, "Envelopes/s per signal, before and after the policy cap-20hz.yaml", "budget: 10,000 deliveries/s")

	policy := filepath.Join(dir, "policy.svg") // a policy misnamed, or a slip of the keyboard
	if err := os.WriteFile(policy, []byte("defaults:\n  max_rate: 20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--budget", "0"}, "tune: --budget must be a number of deliveries/s more than 0, got 0"},
		{[]string{"--budget", "+Inf"}, "tune: --budget must be a number of deliveries/s more than 0, got +Inf"},
		{[]string{"--budget", "NaN"}, "tune: --budget must be a number of deliveries/s more than 0, got NaN"},
		{[]string{"--svg", "-"}, "tune: --svg wants a file"},
		{[]string{"--svg", filepath.Join(dir, "tune.gif")}, "tune: --svg: chart: unknown picture format"},
		{[]string{"--policy", policy, "--svg", policy}, "outfile: the output is an input"},
	} {
		args := append(append([]string{"tune", "--dbc", "../../testdata/yukart.dbc"}, tt.args...), "../../testdata/idle.log")
		var out bytes.Buffer
		err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &out, Stderr: &bytes.Buffer{}}, args)
		if err == nil || !strings.Contains(err.Error(), tt.want) || cli.ExitCode(err) != 2 {
			t.Errorf("tune %s: %v (exit %d), want exit 2 and an error containing %q", strings.Join(tt.args, " "), err, cli.ExitCode(err), tt.want)
		}
		if out.Len() != 0 {
			t.Errorf("tune %s wrote a report:\n%s", strings.Join(tt.args, " "), out.String())
		}
	}
	if b, _ := os.ReadFile(policy); string(b) != "defaults:\n  max_rate: 20\n" {
		t.Errorf("the policy was overwritten: %q", b)
	}
}

// TestTuneImplausibleRanges: a DBC whose every stated range is beyond
// what its signals' bits carry (the raw full scale) is named in a
// warning, and the report normalises by the observed ranges; a DBC with
// one plausible range gets no warning.
func TestTuneImplausibleRanges(t *testing.T) {
	dir := t.TempDir()
	const head = "VERSION \"\"\nBO_ 256 M: 8 E\n SG_ A : 0|16@1- (0.01,0) [0|65535] \"\" E\n"
	raw := writeFile(t, dir, "raw.dbc", head+" SG_ B : 16|2@1+ (1,0) [0|255] \"\" E\n")
	fine := writeFile(t, dir, "fine.dbc", head+" SG_ B : 16|2@1+ (1,0) [0|3] \"\" E\n")
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "(%d.%06d) can0 100#%02X%02X%02X\n", 1000+i/100, (i%100)*10000, (i*37)&0xff, 0, i%4)
	}
	capt := writeFile(t, dir, "c.log", b.String())
	for _, tt := range []struct {
		dbc  string
		warn bool
	}{{raw, true}, {fine, false}} {
		var out, errOut bytes.Buffer
		if err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &out, Stderr: &errOut}, []string{"tune", "--dbc", tt.dbc, "--json", capt}); err != nil {
			t.Fatalf("%s: %v", tt.dbc, err)
		}
		want := "tune: warning: " + tt.dbc + ": every range it states (2 signals) is beyond what the signal's bits carry"
		if got := strings.Contains(errOut.String(), want); got != tt.warn {
			t.Errorf("%s: warning %v, want %v:\n%s", tt.dbc, got, tt.warn, errOut.String())
		}
		var rep struct {
			Signals []struct {
				Name     string `json:"signal"`
				Fidelity struct {
					From     string `json:"range_from"`
					Rejected string `json:"dbc_range_rejected"`
				} `json:"fidelity"`
			} `json:"signals"`
		}
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		for _, s := range rep.Signals {
			if s.Name == "M.A" && (s.Fidelity.From != "observed" || s.Fidelity.Rejected != "beyond_bits") {
				t.Errorf("%s: M.A's range from %q (%q), want observed (beyond_bits)", tt.dbc, s.Fidelity.From, s.Fidelity.Rejected)
			}
		}
	}
}

// TestInterruptedWordsTune: tune ended by a signal says "interrupted",
// not "context canceled", with exit status 1 (generate's is
// internal/cmdkit/cli's TestInterruptedWords).
func TestInterruptedWordsTune(t *testing.T) {
	capture := filepath.Join(t.TempDir(), "c.log")
	if err := run(context.Background(), cli.Env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}, []string{"generate", "-o", capture}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	args := []string{"tune", "--dbc", "../../testdata/yukart.dbc", "--write-policy", filepath.Join(t.TempDir(), "p.yaml"), capture}
	err := run(ctx, cli.Env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}, args)
	if err == nil || cli.ExitCode(err) != 1 || err.Error() != "tune: interrupted" {
		t.Errorf("tune: got %v (exit %d), want %q and exit 1", err, cli.ExitCode(err), "tune: interrupted")
	}
}
