package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenerateDefaultsReproduceIdleLog runs the command as the README
// says, from the repository root: its defaults must give the checked-in
// capture.
func TestGenerateDefaultsReproduceIdleLog(t *testing.T) {
	out := filepath.Join(t.TempDir(), "idle.log")
	t.Chdir(filepath.Join("..", "..", ".."))
	var stderr bytes.Buffer
	if err := run(context.Background(), Env{nil, &bytes.Buffer{}, &stderr}, []string{"generate", "-o", out}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "idle.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("candec generate -o FILE: got %d bytes, want testdata/idle.log's %d, byte for byte", len(got), len(want))
	}
	if !strings.Contains(stderr.String(), "17827 frames") {
		t.Errorf("stderr: got %q, want a summary with 17827 frames", stderr.String())
	}
}

func TestGenerateBadFlags(t *testing.T) {
	dbcPath := filepath.Join("..", "..", "..", "testdata", "yukart.dbc")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--dbc", dbcPath, "--scenario", "race"}, "unknown scenario"},
		{[]string{"--dbc", dbcPath, "--duration", "-1s"}, "--duration -1s: want a positive duration"},
		{[]string{"--dbc", dbcPath, "--duration", "0"}, "--duration 0s: want a positive duration"},
		{[]string{"--dbc", dbcPath, "--duration", "soon"}, `generate: invalid value "soon" for flag -duration`},
		{[]string{"--dbc", dbcPath, "--seed", "x"}, `invalid value "x" for flag -seed`},
		{[]string{"--dbc", dbcPath, "--start", "1969-12-31T23:59:59Z"}, "want a time from 1970"},
		{[]string{"--dbc", dbcPath, "--iface", ""}, "--iface is empty"},
		{[]string{"--dbc", dbcPath, "-o"}, "flag needs an argument: -o; see 'candec generate -h'"},
		{[]string{"--dbc", dbcPath, "--start", "yesterday"}, "--start"},
		{[]string{"--dbc", dbcPath, "extra"}, "unexpected argument"},
		{[]string{"--dbc", "missing.dbc"}, "missing.dbc"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), Env{nil, &stdout, &stderr}, append([]string{"generate"}, tt.args...))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("generate %v: got %v, want an error mentioning %q", tt.args, err, tt.want)
		}
		if stdout.Len() != 0 {
			t.Errorf("generate %v: wrote %d bytes to stdout, want none", tt.args, stdout.Len())
		}
	}
}

func TestGenerateStdout(t *testing.T) {
	var stdout bytes.Buffer
	args := []string{"generate", "--dbc", filepath.Join("..", "..", "..", "testdata", "mix8.dbc"), "--scenario", "drive", "--duration", "1s", "--seed", "9", "--iface", "vcan3"}
	if err := run(context.Background(), Env{nil, &stdout, &bytes.Buffer{}}, args); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) < 850 || len(lines) > 940 {
		t.Errorf("1 s of mix8: got %d lines, want about 891", len(lines))
	}
	if !strings.Contains(lines[0], ") vcan3 ") {
		t.Errorf("first line %q: want interface vcan3", lines[0])
	}
}

// TestGenerateKeepsOutputOnFailure: a run that fails or is interrupted
// after -o is opened leaves an existing file as it was, creates nothing,
// and never removes a device.
func TestGenerateKeepsOutputOnFailure(t *testing.T) {
	dir := t.TempDir()
	dbcPath := filepath.Join("..", "..", "..", "testdata", "yukart.dbc")
	// Messages without a cycle time: the generator has nothing to send.
	noCycle := writeFile(t, dir, "nocycle.dbc", "BO_ 291 Speed: 8 ECU\n SG_ Kmh : 0|16@1+ (0.1,0) [0|300] \"km/h\" Dash\n")
	notDBC := writeFile(t, dir, "empty.log", "(1.000000) can0 123#00\n")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name string
		ctx  context.Context
		args []string
		want string
	}{
		{"not a DBC", context.Background(), []string{"--dbc", notDBC}, "no messages"},
		{"no cyclic messages", context.Background(), []string{"--dbc", noCycle}, "no cyclic messages"},
		{"interrupted", cancelled, []string{"--dbc", dbcPath}, "generate: interrupted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			precious := filepath.Join(dir, "precious.log")
			if err := os.WriteFile(precious, []byte("keep\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			err := run(c.ctx, Env{nil, &bytes.Buffer{}, &bytes.Buffer{}}, append([]string{"generate", "-o", precious}, c.args...))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
			if got, err := os.ReadFile(precious); err != nil || string(got) != "keep\n" {
				t.Fatalf("precious.log after the failure: %q, %v; want it untouched", got, err)
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 3 {
				t.Errorf("directory holds %d entries, want the 3 files it had (no temporary left)", len(ents))
			}
		})
	}
	t.Run("new file not created", func(t *testing.T) {
		name := filepath.Join(dir, "new.log")
		if err := run(cancelled, Env{nil, &bytes.Buffer{}, &bytes.Buffer{}}, []string{"generate", "--dbc", dbcPath, "-o", name}); err == nil {
			t.Fatal("interrupted run: no error")
		}
		if _, err := os.Stat(name); !os.IsNotExist(err) {
			t.Fatalf("new.log after an interrupted run: %v, want it absent", err)
		}
	})
	t.Run("output is the DBC", func(t *testing.T) {
		err := run(context.Background(), Env{nil, &bytes.Buffer{}, &bytes.Buffer{}}, []string{"generate", "--dbc", noCycle, "-o", noCycle})
		if err == nil || !strings.Contains(err.Error(), "is the input") {
			t.Fatalf("got %v, want a refusal", err)
		}
	})
}

// TestGenerateDevNullSurvives: /dev/null as -o of a failing run is still
// the device afterwards.
func TestGenerateDevNullSurvives(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("%s not writable: %v", os.DevNull, err)
	}
	f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	args := []string{"generate", "--dbc", filepath.Join("..", "..", "..", "testdata", "yukart.dbc"), "-o", os.DevNull}
	if err := run(ctx, Env{nil, &bytes.Buffer{}, &bytes.Buffer{}}, args); err == nil {
		t.Fatal("interrupted run: no error")
	}
	fi, err := os.Stat(os.DevNull)
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s after a failed run: %v, %v; want the character device", os.DevNull, fi, err)
	}
}

// TestGenerateDurationBound: a duration beyond a day is refused as a
// usage error naming the bound, before anything is written.
func TestGenerateDurationBound(t *testing.T) {
	out := filepath.Join(t.TempDir(), "c.log")
	err := run(context.Background(), Env{nil, &bytes.Buffer{}, &bytes.Buffer{}}, []string{"generate", "--duration", "1000000h", "-o", out})
	if ExitCode(err) != 2 || err == nil || !strings.Contains(err.Error(), "--duration 1000000h0m0s: at most 24h0m0s") {
		t.Fatalf("got %v (exit %d), want exit 2 naming the bound", err, ExitCode(err))
	}
	if _, serr := os.Stat(out); serr == nil {
		t.Error("the output was written")
	}
}

// TestInterruptedWords: generate (and tune, in the developer's binary:
// cmd/candec's TestInterruptedWordsTune) ended by a signal says "interrupted", not "context
// canceled", with exit status 1.
func TestInterruptedWords(t *testing.T) {
	capPath := filepath.Join(t.TempDir(), "c.log")
	if err := run(context.Background(), Env{nil, &bytes.Buffer{}, &bytes.Buffer{}}, []string{"generate", "-o", capPath}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"generate", "--duration", "24h", "-o", filepath.Join(t.TempDir(), "big.log")}, "generate: interrupted; -o is left as it was"},
	}
	for _, tc := range cases {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := run(ctx, Env{nil, &bytes.Buffer{}, &bytes.Buffer{}}, tc.args)
		if err == nil || ExitCode(err) != 1 || err.Error() != tc.want {
			t.Errorf("%s: got %v (exit %d), want %q and exit 1", tc.args[0], err, ExitCode(err), tc.want)
		}
	}
}
