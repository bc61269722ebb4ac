package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yukart/candec/internal/testkit"
)

var yukartDBC = filepath.Join("..", "..", "..", "testdata", "yukart.dbc")

// decodeOut runs candec decode with stdin and returns stdout, stderr and
// the error.
func decodeOut(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, stderr bytes.Buffer
	err := run(context.Background(), Env{strings.NewReader(stdin), &out, &stderr}, append([]string{"decode"}, args...))
	return out.String(), stderr.String(), err
}

// TestDecodeOutputFileSafe: -o is created only after every input is
// checked, never replaces an input, and is left as it was when the
// command fails before decoding.
func TestDecodeOutputFileSafe(t *testing.T) {
	dir := t.TempDir()
	capture := writeFile(t, dir, "idle.log", "(1791563856.001301) can0 0A0#0000070000000000\n")
	bad := writeFile(t, dir, "bad.dbc", "BO_ 291 Speed: 8 ECU\n SG_ Kmh : 0|16@3+ (0.1,0) [0|300] \"km/h\" Dash\n")
	policy := writeFile(t, dir, "p.yaml", "defaults: {max_rate: 10}\n")
	badPolicy := writeFile(t, dir, "bad.yaml", "defaults: {max_rate: fast}\n")
	good := writeFile(t, dir, "good.dbc", "BO_ 160 M: 8 E\n SG_ S : 0|16@1+ (1,0) [0|0] \"\" E\n")
	for _, c := range []struct {
		name    string
		args    []string // -o keep is added in front
		keep    string   // the -o file; "" for keep.jsonl
		wantErr string
	}{
		{"bad dbc", []string{"--dbc", bad, capture}, "", "bad.dbc:2:"},
		{"dbc not found", []string{"--dbc", filepath.Join(dir, "nope.dbc"), capture}, "", "nope.dbc"},
		{"capture not found", []string{"--dbc", yukartDBC, filepath.Join(dir, "nope.log")}, "", "nope.log"},
		{"capture is a directory", []string{"--dbc", yukartDBC, t.TempDir()}, "", "is a directory"},
		{"bad first line", []string{"--dbc", yukartDBC, writeFile(t, dir, "bad.log", "(1.0) can0 0A0#FAZZ\n")}, "", ":1: column"},
		{"capture of no known format", []string{"--dbc", yukartDBC, writeFile(t, dir, "notes.txt", "hello\n")}, "", `notes.txt: capture: unknown format: its first line is "hello"`},
		{"bad format", []string{"--dbc", yukartDBC, "--format", "xml", capture}, "", "--format"},
		{"glob matches nothing", []string{"--dbc", yukartDBC, "--signals", "NOPE_*", capture}, "", "matches no signal"},
		{"output is the capture", []string{"--dbc", yukartDBC, capture}, capture, "is the input"},
		{"output is the dbc", []string{"--dbc", good, capture}, good, "is the input"},
		{"policy: bad dbc", []string{"--policy", policy, "--dbc", bad, capture}, "", "bad.dbc:2:"},
		{"policy: bad policy file", []string{"--policy", badPolicy, "--dbc", yukartDBC, capture}, "", "bad.yaml"},
		{"policy: output is the capture", []string{"--policy", policy, "--dbc", yukartDBC, capture}, capture, "is the input"},
		{"policy: output is the policy", []string{"--policy", policy, "--dbc", yukartDBC, capture}, policy, "is the input"},
	} {
		t.Run(c.name, func(t *testing.T) {
			keep := c.keep
			if keep == "" {
				keep = writeFile(t, dir, "keep.jsonl", "precious\n")
			}
			before, _ := os.ReadFile(keep)
			_, _, err := decodeOut(t, "", append([]string{"-o", keep}, c.args...)...)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("got %v, want an error containing %q", err, c.wantErr)
			}
			if after, _ := os.ReadFile(keep); !bytes.Equal(after, before) {
				t.Fatalf("%s: got %q after the error, want %q untouched", filepath.Base(keep), after, before)
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), ".") {
					t.Errorf("temporary file %s left behind", e.Name())
				}
			}
		})
	}
}

// TestDecodeKeepsGoodOutputBeforeBadLine: a malformed line ends the
// decode with an error naming the capture and line, after everything
// decoded before it was written whole, to stdout and to -o.
func TestDecodeKeepsGoodOutputBeforeBadLine(t *testing.T) {
	good := "(1791563856.001301) can0 0A0#0000070000000000\n" +
		"(1791563856.002301) can0 0A0#0100070000000000\n" +
		"(1791563856.003301) can0 0A0#0200070000000000\n"
	capture := good + "(1791563856.004301) can0 0A0#FAZZ\n"
	const wantLines = 3 * 6 // MCU_MotorStatus has six signals
	check := func(t *testing.T, out string, err error) {
		t.Helper()
		if err == nil || ExitCode(err) != 1 || !strings.Contains(err.Error(), ":4: ") {
			t.Fatalf("got %v (status %d), want status 1 naming line 4", err, ExitCode(err))
		}
		if !strings.HasSuffix(out, "}\n") {
			t.Fatalf("output does not end with a whole line: %q", out[max(0, len(out)-40):])
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != wantLines {
			t.Fatalf("got %d lines, want %d", len(lines), wantLines)
		}
		for _, l := range lines {
			if !json.Valid([]byte(l)) {
				t.Fatalf("line %q is not JSON", l)
			}
		}
	}
	t.Run("stdout", func(t *testing.T) {
		out, _, err := decodeOut(t, capture, "--dbc", yukartDBC, "-")
		check(t, out, err)
		if !strings.Contains(err.Error(), "decode: stdin:4: ") {
			t.Errorf("error %q does not name stdin:4", err)
		}
	})
	t.Run("-o file", func(t *testing.T) {
		dir := t.TempDir()
		in := filepath.Join(dir, "bad.log")
		os.WriteFile(in, []byte(capture), 0o644)
		o := filepath.Join(dir, "out.jsonl")
		_, _, err := decodeOut(t, "", "--dbc", yukartDBC, "-o", o, in)
		got, _ := os.ReadFile(o)
		check(t, string(got), err)
		if !strings.Contains(err.Error(), in+":4: ") {
			t.Errorf("error %q does not name %s:4", err, in)
		}
	})
	t.Run("-o /dev/null", func(t *testing.T) {
		f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			t.Skipf("%s not writable: %v", os.DevNull, err)
		}
		f.Close()
		in := filepath.Join(t.TempDir(), "bad.log")
		os.WriteFile(in, []byte(capture), 0o644)
		if _, _, err := decodeOut(t, "", "--dbc", yukartDBC, "-o", os.DevNull, in); err == nil {
			t.Fatal("no error for the bad line")
		}
		if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("%s after a failed decode: %v, %v; want the character device", os.DevNull, fi, err)
		}
	})
	t.Run("large output cut at a line", func(t *testing.T) {
		// More than the writer's buffer before the bad line.
		var b strings.Builder
		for i := range 5000 {
			fmt.Fprintf(&b, "(1791563856.%06d) can0 0A0#0000070000000000\n", i)
		}
		b.WriteString("(1791563857.000000) can0 0A0#FAZZ\n")
		out, _, err := decodeOut(t, b.String(), "--dbc", yukartDBC, "-")
		if err == nil || !strings.HasSuffix(out, "}\n") || strings.Count(out, "\n") != 5000*6 {
			t.Fatalf("got %d lines and %v, want %d whole lines and an error", strings.Count(out, "\n"), err, 5000*6)
		}
	})
}

// TestDecodeFlagChecks: numbers out of range and flags that do nothing
// in the mode chosen are errors naming the flag.
func TestDecodeFlagChecks(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--policy", "default", "--tail", "-5s"}, "decode: --tail -5s: want 0 or a positive duration"},
		{[]string{"--tail", "5s"}, "decode: --tail works only with --policy"},
		{[]string{"--window"}, "decode: --window works only with --policy"},
		{[]string{"--topic-template", "x/{signal}"}, "decode: --topic-template works only with --policy"},
		{[]string{"--policy", "default", "--signals", "MOT_*"}, "--signals and --format do not apply with --policy"},
		{[]string{"--policy", "default", "--format", "csv"}, "--signals and --format do not apply with --policy"},
		{[]string{"--tail", "soon"}, `decode: invalid value "soon" for flag -tail`},
		{[]string{"--signals", "NOPE_*"}, `decode: --signals "NOPE_*" matches no signal in`},
	} {
		args := append(append([]string{"--dbc", yukartDBC}, c.args...), "-")
		_, _, err := decodeOut(t, "", args...)
		if err == nil || ExitCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("decode %v: got %v (status %d), want status 2 with %q", c.args, err, ExitCode(err), c.want)
		}
	}
}

// TestDecodeSummary: what the output alone does not show is said on
// stderr, one line each, with counts per interface.
func TestDecodeSummary(t *testing.T) {
	capture := "(1.000000) can0 0A0#0000070000000000\n" +
		"(1.001000) can0 7FF#00\n" + // unknown ID
		"(1.002000) can0 0A0#R\n" + // remote
		"(1.003000) can0 20000004#0004000000000000\n" + // error frame
		"(1.004000) can0 0A0#0000\n" + // short: 5 of 6 signals left out
		"(1.005000) can1 0A0#0000070000000000\n" +
		"(1.006000) can1 0A0#0000070000000000\n" +
		"(1.007000) can1 0A0#0000070000000000\n"
	for _, c := range []struct {
		name    string
		stdin   string
		args    []string
		want    []string
		notWant []string
	}{
		{"per interface", capture, []string{"--dbc", yukartDBC}, []string{
			"candec decode: can0: 1 of 5 frames had IDs not in " + yukartDBC + "\n",
			"candec decode: can0: 1 remote and 1 error frames skipped (they carry no signals)\n",
			"candec decode: can0: 1 frames shorter than their message\n",
			"candec decode: 5 values left out: their signals do not fit in short frames\n",
		}, []string{"can1:"}},
		{"dbc for an absent interface", capture, []string{"--dbc", "can7=" + yukartDBC}, []string{
			"candec decode: can0: 5 frames not decoded: no --dbc for this interface\n",
		}, nil},
		{"one dbc decoding two interfaces", capture, []string{"--dbc", yukartDBC}, []string{
			"candec decode: warning: --dbc " + yukartDBC + ", given for every interface, decoded frames of 2: can0, can1; ",
		}, nil},
		{"empty capture", "", []string{"--dbc", yukartDBC}, []string{"candec decode: stdin holds no frames\n"}, nil},
		{"clean", "(1.000000) can0 0A0#0000070000000000\n", []string{"--dbc", yukartDBC}, nil, []string{"candec"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, err := decodeOut(t, c.stdin, append(c.args, "-")...)
			// An IFACE= that names no interface of the capture fails
			// the decode once it is written; the summary is out.
			if wantErr := "decode: --dbc can7=" + yukartDBC + ": no interface can7 in stdin (its interfaces are can0, can1)"; c.name == "dbc for an absent interface" {
				if err == nil || err.Error() != wantErr {
					t.Errorf("got error %v, want %q", err, wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			for _, n := range c.notWant {
				if strings.Contains(stderr, n) {
					t.Errorf("stderr has %q:\n%s", n, stderr)
				}
			}
		})
	}
}

// TestDecodeNumberRule: decode writes numbers, non-finite values and
// flags as the envelopes do, in JSON and in CSV.
func TestDecodeNumberRule(t *testing.T) {
	// MOT_Torque raw 7 × 0.1; IMU_AccelX float32 NaN, IMU_AccelY +Inf
	// (above its maximum 50).
	capture := "(1.000000) can0 0A0#0000070000000000\n" +
		"(1.001000) can0 0E0#0000C07F0000807F\n"
	out, _, err := decodeOut(t, capture, "--dbc", yukartDBC, "--signals", "MOT_Torque,IMU_Accel*", "-")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		`"signal":"MCU_MotorStatus.MOT_Torque","value":0.7,"unit":"Nm"}`,
		`"signal":"IMU_Acceleration.IMU_AccelX","value":null,"nonfinite":"NaN","unit":"m/s^2"}`,
		`"signal":"IMU_Acceleration.IMU_AccelY","value":null,"nonfinite":"+Inf","unit":"m/s^2","oor":true}`,
	} {
		if !strings.Contains(out, w) {
			t.Errorf("JSON output lacks %s:\n%s", w, out)
		}
	}
	out, _, err = decodeOut(t, capture, "--dbc", yukartDBC, "--format", "csv", "--signals", "MOT_Torque,IMU_Accel*", "-")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"t,ts,bus,id,signal,value,nonfinite,unit,label,oor\n",
		",MCU_MotorStatus.MOT_Torque,0.7,,Nm,,\n",
		",IMU_Acceleration.IMU_AccelX,,NaN,m/s^2,,\n",
		",IMU_Acceleration.IMU_AccelY,,+Inf,m/s^2,,true\n",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("CSV output lacks %q:\n%s", w, out)
		}
	}
}

// TestDecodeLivePipe: on a pipe whose writer is still open, decode
// writes each batch's lines as soon as it waits for more input, and a
// cancelled context (SIGINT, SIGTERM) ends a read blocked on the pipe
// with those lines kept. Both stdin and a FIFO named as the capture.
func TestDecodeLivePipe(t *testing.T) {
	const batch = "(1.000000) can0 0A0#0000070000000000\n(1.010000) can0 0A0#0100070000000000\n"
	for _, kind := range []string{"stdin pipe", "fifo"} {
		t.Run(kind, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out testkit.SyncBuffer
			done := make(chan error, 1)
			var w *os.File
			switch kind {
			case "stdin pipe":
				pr, pw, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				defer pr.Close()
				w = pw
				go func() { done <- run(ctx, Env{pr, &out, &bytes.Buffer{}}, []string{"decode", "--dbc", yukartDBC, "-"}) }()
			case "fifo":
				fifo := filepath.Join(t.TempDir(), "live.log")
				if err := syscall.Mkfifo(fifo, 0o600); err != nil {
					t.Skipf("mkfifo: %v", err)
				}
				go func() {
					done <- run(ctx, Env{nil, &out, &bytes.Buffer{}}, []string{"decode", "--dbc", yukartDBC, fifo})
				}()
				// Blocks until decode opens the FIFO for reading.
				f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				w = f
			}
			defer w.Close()
			if _, err := io.WriteString(w, batch); err != nil {
				t.Fatal(err)
			}
			// The writer stays open: the first batch must still come out.
			waitFor(t, "the first batch's 12 lines before EOF", func() bool { return strings.Count(out.String(), "\n") == 12 })
			cancel()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "interrupted") {
					t.Errorf("got %v, want an interrupted error", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("decode did not return after its context was cancelled while blocked on the pipe")
			}
			if n := strings.Count(out.String(), "\n"); n != 12 || !strings.HasSuffix(out.String(), "}\n") {
				t.Errorf("got %d lines, want the 12 decoded before the cancel, whole", n)
			}
		})
	}
}

// TestDecodeInterruptedBeforeFirstLine: a cancelled context ends a
// decode still waiting for the first line of a pipe, the one that shows
// the capture's format.
func TestDecodeInterruptedBeforeFirstLine(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() { done <- run(ctx, Env{pr, &out, &bytes.Buffer{}}, []string{"decode", "--dbc", yukartDBC, "-"}) }()
	if _, err := io.WriteString(pw, "\n("); err != nil { // not yet enough to know the format
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if want := "decode stdin: interrupted after 0 frames: context canceled"; err == nil || err.Error() != want {
			t.Errorf("got %v, want %q", err, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("decode did not return after its context was cancelled")
	}
	if out.Len() != 0 {
		t.Errorf("printed %q, want nothing", out.String())
	}
}

// waitFor polls cond until it holds; the limit only stops a test that
// would otherwise hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10s for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestDecodeMatchesEnvelopes: every value decode writes is, character
// for character, the value the service publishes for the same frame
// (decode --policy with no cap publishes every value): the car's idle
// capture plus a frame of NaN and +Inf.
func TestDecodeMatchesEnvelopes(t *testing.T) {
	idle, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "idle.log"))
	if err != nil {
		t.Fatal(err)
	}
	// Just after the capture's last frame: a frame far from the policy
	// clock would be dropped as an outlier (see docs/policy.md).
	capture := string(idle) + "(1791563876.000000) can0 0E0#0000C07F0000807F\n"
	policy := filepath.Join(t.TempDir(), "all.yaml")
	os.WriteFile(policy, []byte("{}\n"), 0o644)

	type val struct{ value, nonfinite, oor string }
	fields := func(obj map[string]json.RawMessage) val {
		return val{string(obj["value"]), string(obj["nonfinite"]), string(obj["oor"])}
	}
	type key struct {
		ts     string
		signal string
	}
	out, _, err := decodeOut(t, capture, "--dbc", yukartDBC, "-")
	if err != nil {
		t.Fatal(err)
	}
	decoded := map[key][]val{}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		var sig string
		json.Unmarshal(obj["signal"], &sig)
		k := key{string(obj["ts"]), sig}
		decoded[k] = append(decoded[k], fields(obj))
	}
	envs, _, err := decodeOut(t, capture, "--dbc", yukartDBC, "--policy", policy, "--topic-template", "v/{message}/{signal}", "-")
	if err != nil {
		t.Fatal(err)
	}
	n, nonfinite := 0, 0
	for _, line := range strings.Split(strings.TrimSuffix(envs, "\n"), "\n") {
		topic, payload, _ := strings.Cut(line, " ")
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(payload), &obj); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		msg, sig, _ := strings.Cut(strings.TrimPrefix(topic, "v/"), "/")
		k := key{string(obj["ts"]), msg + "." + sig}
		want := fields(obj)
		if want.nonfinite == `"NaN"` {
			nonfinite++
		}
		if len(decoded[k]) == 0 {
			t.Fatalf("envelope %s: no decoded value for %v", line, k)
		}
		if got := decoded[k][0]; got != want {
			t.Fatalf("%v: decode wrote %+v, the envelope has %+v", k, got, want)
		}
		decoded[k] = decoded[k][1:]
		n++
	}
	if n < 80000 || nonfinite != 1 {
		t.Fatalf("compared %d values (%d NaN), want all of idle.log's 80332 and the NaN", n, nonfinite)
	}
}

// TestDecodeHostileText: a DBC unit and label holding ESC and an
// interface name holding byte 0xFF give valid JSON lines and CSV rows,
// and stderr escapes what it quotes of them.
func TestDecodeHostileText(t *testing.T) {
	dir := t.TempDir()
	dbcFile := writeFile(t, dir, "esc.dbc", "BO_ 291 Speed: 8 ECU\n SG_ Kmh : 0|8@1+ (1,0) [0|300] \"\x1b]0;pwned\x07\" Dash\nVAL_ 291 Kmh 1 \"\x1b[2J,x\" ;\n")
	capFile := writeFile(t, dir, "x.log", "(1.000000) can\xff 123#01\n(1.000100) vcan\xc2\x9b 7FF#00\n")
	for _, format := range []string{"json", "csv"} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), Env{nil, &stdout, &stderr}, []string{"decode", "--format", format, "--dbc", dbcFile, capFile}); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if format == "json" {
			lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
			if len(lines) != 1 {
				t.Fatalf("json: got %d lines, want 1: %q", len(lines), stdout.String())
			}
			if !json.Valid([]byte(lines[0])) {
				t.Errorf("json: not valid JSON: %q", lines[0])
			}
		} else {
			recs, err := csv.NewReader(&stdout).ReadAll()
			if err != nil || len(recs) != 2 || len(recs[1]) != 10 {
				t.Fatalf("csv: got %q, %v; want a header and one row of 10 fields", recs, err)
			}
			if got, want := recs[1][8], "\ufffd[2J,x"; got != want {
				t.Errorf("csv label: got %q, want %q", got, want)
			}
		}
		if strings.ContainsAny(stderr.String(), "\x1b\u009b") || strings.Contains(stderr.String(), "\xff") || !strings.Contains(stderr.String(), `vcan\u009b`) {
			t.Errorf("%s: stderr %q: want the interface escaped", format, stderr.String())
		}
	}
	// --policy: every line is "topic payload", the payload valid JSON.
	var stdout bytes.Buffer
	if err := run(context.Background(), Env{nil, &stdout, &bytes.Buffer{}}, []string{"decode", "--policy", "default", "--dbc", dbcFile, capFile}); err != nil {
		t.Fatalf("--policy: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	for _, line := range lines {
		_, payload, ok := strings.Cut(line, " ")
		if !ok || !json.Valid([]byte(payload)) || strings.ContainsAny(line, "\x1b\x07") {
			t.Errorf("--policy: line %q: want a topic and a valid JSON payload, no control character", line)
		}
	}
	if len(lines) == 0 || !strings.Contains(stdout.String(), `"unit":"\u001b]0;pwned\u0007"`) {
		t.Errorf("--policy: output %q lacks the escaped unit", stdout.String())
	}
}
