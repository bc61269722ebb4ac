package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDecodePolicyKeepsGoodOutputBeforeBadLine: with --policy, a
// malformed line (or an interrupt) ends the run there as the end of the
// capture would: the envelopes are those of the capture cut before that
// line, written whole to stdout or committed to -o, and the command
// still fails, naming the capture and the line. With nothing to keep,
// -o is left as it was.
func TestDecodePolicyKeepsGoodOutputBeforeBadLine(t *testing.T) {
	frames := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "(1791563856.%06d) can0 0A0#%02X00070000000000\n", i*1000, byte(i))
		}
		return b.String()
	}
	const bad = "(1791563857.000000) can0 0A0#FAZZ\n"
	dir := t.TempDir()
	for i, c := range []struct {
		name      string
		good      string // the frames before the bad line
		rest      string // the bad line and anything after it
		args      []string
		file      bool // the capture is a file written to -o; else stdin to stdout
		cancelled bool // the context is cancelled from the start
		wantErr   string
		wantKept  bool // the output is kept; otherwise -o keeps "precious"
	}{
		{"stdout", frames(3), bad, nil, false, false, "decode: stdin:4: column ", true},
		{"file and -o", frames(3), bad + frames(2), nil, true, false, ":4: column ", true},
		{"with --tail", frames(3), bad, []string{"--tail", "10s"}, false, false, "decode: stdin:4: ", true},
		{"more than the write buffer", frames(5000), bad, []string{"--policy", "{}"}, false, false, "decode: stdin:5001: ", true},
		{"bad first line", "", bad + frames(3), nil, true, false, ":1: column ", false},
		{"interrupted", frames(5000), "", nil, true, true, "interrupted after 4096 frames", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			policy := []string{"--policy", "default"}
			args := c.args
			if len(args) > 1 && args[0] == "--policy" {
				p := filepath.Join(dir, fmt.Sprintf("p%d.yaml", i))
				os.WriteFile(p, []byte(args[1]+"\n"), 0o644)
				policy, args = []string{"--policy", p}, args[2:]
			}
			base := append(append([]string{"decode", "--dbc", yukartDBC}, policy...), args...)
			// What the same run writes for the good frames alone.
			want := c.good
			if c.cancelled {
				want = frames(4096)
			}
			var wantOut strings.Builder
			if err := run(context.Background(), Env{strings.NewReader(want), &wantOut, &strings.Builder{}}, append(base, "-")); err != nil {
				t.Fatal(err)
			}
			capture := c.good + c.rest
			in, stdin := "-", strings.NewReader(capture)
			if c.file {
				in = filepath.Join(dir, fmt.Sprintf("c%d.log", i))
				os.WriteFile(in, []byte(capture), 0o644)
			}
			o := filepath.Join(dir, fmt.Sprintf("out%d.txt", i))
			os.WriteFile(o, []byte("precious\n"), 0o644)
			ctx, cancel := context.WithCancel(context.Background())
			if c.cancelled {
				cancel()
			}
			defer cancel()
			var stdout, stderr strings.Builder
			oargs := []string{"-o", o}
			if !c.file {
				oargs = nil // to stdout
			}
			err := run(ctx, Env{stdin, &stdout, &stderr}, append(append(base, oargs...), in))
			if err == nil || ExitCode(err) == 0 || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("got %v (status %d), want a non-zero status and an error containing %q", err, ExitCode(err), c.wantErr)
			}
			if c.file && !strings.Contains(err.Error(), in) {
				t.Errorf("error %q does not name %s", err, in)
			}
			got, _ := os.ReadFile(o)
			if !c.file {
				got = []byte(stdout.String())
			}
			switch {
			case !c.wantKept && string(got) != "precious\n":
				t.Errorf("-o holds %q, want it untouched", got)
			case c.wantKept && wantOut.Len() == 0:
				t.Fatal("the good frames alone give no envelopes: the case proves nothing")
			case c.wantKept && string(got) != wantOut.String():
				t.Errorf("-o holds %d lines, want the %d of the good frames alone:\ngot  %.300q\nwant %.300q",
					strings.Count(string(got), "\n"), strings.Count(wantOut.String(), "\n"), got, wantOut.String())
			}
		})
	}
}
