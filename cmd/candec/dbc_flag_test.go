package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/cmdkit/cli"
	"github.com/yukart/candec/internal/testkit/realdata"
	"github.com/yukart/candec/service"
)

// twoBus is a capture of two buses with a DBC for each: A for can0, B
// for can1, whose IDs overlap with different meanings (as the RAV4's
// powertrain and radar DBCs share 0x224 and 0x228).
type twoBus struct {
	name, a, b, capture string
	// globA and globB select a signal of A and one of B, for plot.
	globA, globB string
}

// twoBuses are the synthetic capture of testdata/twobus and, where the
// shared real data is, the RAV4's drive.
func twoBuses(t *testing.T) []twoBus {
	out := []twoBus{{name: "synthetic",
		a: "testdata/twobus/pt.dbc", b: "testdata/twobus/radar.dbc", capture: "testdata/twobus/twobus.log",
		globA: "Rpm", globB: "Dist"}}
	if dir, ok := realdata.Path(); ok {
		out = append(out, twoBus{name: "rav4",
			a:       filepath.Join(dir, "dbc", "toyota_new_mc_pt_generated.dbc"),
			b:       filepath.Join(dir, "dbc", "toyota_adas.dbc"),
			capture: filepath.Join(dir, "logs", "rav4_2017_highway_1min.log"),
			globA:   "STEER_ANGLE_SENSOR.STEER_ANGLE", globB: "TRACK_B_4.REL_ACCEL"})
	} else {
		t.Log("no shared real data: the RAV4's drive is not tried")
	}
	return out
}

// dbcForms are the ways to say which DBC decodes which bus: each
// interface its own, in one --dbc or two, and one DBC for every bus.
func dbcForms(c twoBus) []struct {
	name   string
	args   []string
	byIfac bool
} {
	return []struct {
		name   string
		args   []string
		byIfac bool
	}{
		{"can0=A,can1=B", []string{"--dbc", "can0=" + c.a + ",can1=" + c.b}, true},
		{"--dbc can0=A --dbc can1=B", []string{"--dbc", "can0=" + c.a, "--dbc", "can1=" + c.b}, true},
		{"A for every bus", []string{"--dbc", c.a}, false},
	}
}

// truth is what the capture holds, worked out from the capture and the
// DBCs apart from candec's decode: by interface, the data frames, and
// those whose ID the interface's own DBC (A for can0, B for can1)
// defines, or A defines.
type truth struct {
	frames, own, inA map[string]int
	a, b             *dbc.Database
}

func truthOf(t *testing.T, c twoBus) truth {
	t.Helper()
	a, err := dbc.Load(c.a)
	if err != nil {
		t.Fatal(err)
	}
	b, err := dbc.Load(c.b)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(c.capture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := truth{frames: map[string]int{}, own: map[string]int{}, inA: map[string]int{}, a: a, b: b}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// (SECONDS) IFACE ID#DATA
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		iface := fields[1]
		id, data, _ := strings.Cut(fields[2], "#")
		if strings.HasPrefix(data, "R") {
			continue // remote
		}
		var n uint64
		for _, ch := range id {
			n = n<<4 | uint64(strings.IndexRune("0123456789ABCDEF", ch))
		}
		ext := len(id) == 8
		tr.frames[iface]++
		if a.Message(uint32(n), ext) != nil {
			tr.inA[iface]++
		}
		own := map[string]*dbc.Database{"can0": a, "can1": b}[iface]
		if own != nil && own.Message(uint32(n), ext) != nil {
			tr.own[iface]++
		}
	}
	return tr
}

// runCmd runs candec with args; it returns standard output, standard
// error and the exit status.
func runCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}, args)
	if err != nil {
		errb.WriteString("error: " + err.Error() + "\n")
	}
	return out.String(), errb.String(), cli.ExitCode(err)
}

// sharedWarning is the start of the warning of one DBC for every bus
// that decoded frames of several.
func sharedWarning(cmd, file string) string {
	return "candec " + cmd + ": warning: --dbc " + file + ", given for every interface, decoded frames of "
}

// TestDBCFlagEveryCommand: --dbc means the same in every command that
// takes a DBC. With a DBC per interface, each interface's frames are
// decoded with its own DBC only (decode's lines, decode --policy's
// envelopes, tune's frames and signals, plot's series, the ingest's
// buses, the service's config); with one DBC for every bus that
// decodes frames of both, each command says so once and still decodes.
func TestDBCFlagEveryCommand(t *testing.T) {
	every := filepath.Join(t.TempDir(), "every.yaml")
	if err := os.WriteFile(every, []byte("defaults: {max_rate: 0}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range twoBuses(t) {
		tr := truthOf(t, c)
		for _, form := range dbcForms(c) {
			t.Run(c.name+"/"+form.name, func(t *testing.T) {
				counts := checkDecode(t, c, tr, form.args, form.byIfac)
				checkDecodePolicy(t, c, form.args, form.byIfac, every, counts)
				checkTune(t, c, tr, form.args, form.byIfac, counts)
				checkTuneWrite(t, c, form.args, form.byIfac)
				checkPlot(t, c, form.args, form.byIfac)
				checkIngestBuses(t, c, form.args, form.byIfac)
			})
		}
		t.Run(c.name+"/run's config", func(t *testing.T) { checkRunConfig(t, c) })
	}
}

// checkDecode: decode's lines of can0 are A's messages, of can1 B's
// (or A's, for every bus); it returns the values by message.signal, as
// JSON, in order.
func checkDecode(t *testing.T, c twoBus, tr truth, dbcArgs []string, byIface bool) map[string][]string {
	stdout, stderr, code := runCmd(t, append(append([]string{"decode"}, dbcArgs...), c.capture)...)
	if code != 0 {
		t.Fatalf("decode: exit %d\n%s", code, stderr)
	}
	counts := map[string][]string{}
	buses := map[string]bool{}
	for line := range strings.Lines(stdout) {
		var v struct {
			Bus, Signal string
			Value       json.RawMessage
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("decode: %v: %s", err, line)
		}
		counts[v.Signal] = append(counts[v.Signal], string(v.Value))
		buses[v.Bus] = true
		msg, _, _ := strings.Cut(v.Signal, ".")
		db := tr.a
		if v.Bus == "can1" && byIface {
			db = tr.b
		}
		if !slices.ContainsFunc(db.Messages, func(m *dbc.Message) bool { return m.Name == msg }) {
			t.Fatalf("decode: %s on %s is no message of its DBC", v.Signal, v.Bus)
		}
	}
	if !buses["can0"] || !buses["can1"] {
		t.Errorf("decode: values of %v, want can0 and can1", buses)
	}
	if got := strings.Contains(stderr, sharedWarning("decode", c.a)); got == byIface || strings.Count(stderr, "warning") > 1 {
		t.Errorf("decode: the warning of one DBC for every bus said %v times, want it %v:\n%s", strings.Count(stderr, "warning"), !byIface, stderr)
	}
	if byIface {
		for iface, n := range tr.frames {
			if iface != "can0" && iface != "can1" && !strings.Contains(stderr, "candec decode: "+iface+": "+itoa(n)+" frames not decoded: no --dbc for this interface\n") {
				t.Errorf("decode: stderr does not count %s's %d frames as without a DBC:\n%s", iface, n, stderr)
			}
		}
	}
	return counts
}

// checkDecodePolicy: a policy that publishes every value publishes, per
// signal, the values decode has, in their order.
func checkDecodePolicy(t *testing.T, c twoBus, dbcArgs []string, byIface bool, every string, counts map[string][]string) {
	args := append(append([]string{"decode", "--policy", every, "--topic-template", "{message}/{signal}"}, dbcArgs...), c.capture)
	stdout, stderr, code := runCmd(t, args...)
	if code != 0 {
		t.Fatalf("decode --policy: exit %d\n%s", code, stderr)
	}
	got := map[string][]string{}
	for line := range strings.Lines(stdout) {
		topic, payload, _ := strings.Cut(line, " ")
		var env struct{ Value json.RawMessage }
		if err := json.Unmarshal([]byte(payload), &env); err != nil {
			t.Fatalf("decode --policy: %v: %s", err, line)
		}
		sig := strings.Replace(topic, "/", ".", 1)
		got[sig] = append(got[sig], string(env.Value))
	}
	if byIface && !reflect.DeepEqual(got, counts) {
		t.Errorf("decode --policy: %d signals, %d envelopes; decode: %d signals, %d values, or other values", len(got), total(got), len(counts), total(counts))
	}
	if strings.Contains(stderr, sharedWarning("decode", c.a)) == byIface {
		t.Errorf("decode --policy: the warning of one DBC for every bus, want it %v:\n%s", !byIface, stderr)
	}
}

// checkTune: tune reads the frames each interface's DBC defines (every
// frame of every bus with one DBC for all), and reports the signals
// decode decoded.
func checkTune(t *testing.T, c twoBus, tr truth, dbcArgs []string, byIface bool, counts map[string][]string) {
	args := append(append([]string{"tune", "--json", "--topic-template", "{message}/{signal}"}, dbcArgs...), c.capture)
	stdout, stderr, code := runCmd(t, args...)
	if code != 0 {
		t.Fatalf("tune: exit %d\n%s", code, stderr)
	}
	var rep struct {
		Frames  int `json:"frames"`
		Unknown int `json:"unknown_frames"`
		Signals []struct {
			Signal string  `json:"signal"`
			Rate   float64 `json:"frames_per_s"`
		} `json:"signals"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	wantFrames, wantUnknown := tr.own["can0"]+tr.own["can1"], 0
	if !byIface {
		wantFrames, wantUnknown = sum(tr.frames), sum(tr.frames)-sum(tr.inA)
	}
	if rep.Frames != wantFrames || rep.Unknown != wantUnknown {
		t.Errorf("tune: %d frames (%d unknown), want %d (%d)", rep.Frames, rep.Unknown, wantFrames, wantUnknown)
	}
	seen := map[string]int{}
	for _, s := range rep.Signals {
		if s.Rate > 0 {
			seen[s.Signal] = 1
		}
	}
	want := map[string]int{}
	for s := range counts {
		want[s] = 1
	}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("tune: %d signals with frames, decode %d", len(seen), len(want))
	}
	if strings.Contains(stderr, sharedWarning("tune", c.a)) == byIface {
		t.Errorf("tune: the warning of one DBC for every bus, want it %v:\n%s", !byIface, stderr)
	}
}

// checkTuneWrite: the written policy has rules for the signals of B
// only when can1 is B's.
func checkTuneWrite(t *testing.T, c twoBus, dbcArgs []string, byIface bool) {
	out := filepath.Join(t.TempDir(), "plan.yaml")
	args := append(append([]string{"tune", "--budget", "1e9", "--write-policy", out, "--topic-template", "{message}/{signal}"}, dbcArgs...), c.capture)
	if _, stderr, code := runCmd(t, args...); code != 0 {
		t.Fatalf("tune --write-policy: exit %d\n%s", code, stderr)
	}
	plan, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Contains(string(plan), c.globB); got != byIface {
		t.Errorf("tune --write-policy: a rule for %s %v, want %v", c.globB, got, byIface)
	}
}

// checkPlot: plot draws a signal of B from can1 with a DBC per
// interface, and says one DBC for every bus is most likely a mistake.
func checkPlot(t *testing.T, c twoBus, dbcArgs []string, byIface bool) {
	out := filepath.Join(t.TempDir(), "p.svg")
	glob := c.globA
	if byIface {
		glob = c.globB
	}
	args := append(append([]string{"plot", "--signals", glob, "-o", out}, dbcArgs...), c.capture)
	_, stderr, code := runCmd(t, args...)
	if code != 0 || !strings.Contains(stderr, "wrote "+out+" (1 signals") || strings.Contains(stderr, "warning: no ") {
		t.Errorf("plot --signals %s: exit %d, want one signal drawn:\n%s", glob, code, stderr)
	}
	if strings.Contains(stderr, sharedWarning("plot", c.a)) == byIface {
		t.Errorf("plot: the warning of one DBC for every bus, want it %v:\n%s", !byIface, stderr)
	}
}

// checkIngestBuses: ingest's --dbc gives its buses: can0 and can1 with
// their own DBCs, or one for every interface.
func checkIngestBuses(t *testing.T, c twoBus, dbcArgs []string, byIface bool) {
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	var files dbc.BusFiles
	fs.Var(&files, "dbc", cli.DBCHelp) // as runIngest has it
	if err := fs.Parse(dbcArgs); err != nil {
		t.Fatal(err)
	}
	buses, _, err := ingestBuses(context.Background(), files)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range buses {
		got = append(got, b.Interface+"="+b.DB.Messages[0].File)
	}
	want := []string{"=" + c.a}
	if byIface {
		want = []string{"can0=" + c.a, "can1=" + c.b}
	}
	if !slices.Equal(got, want) {
		t.Errorf("ingest's buses: got %q, want %q", got, want)
	}
}

// checkRunConfig: run's config takes the same forms, in the file (a
// list, names relative to the file), a variable and a flag, and builds
// the service.
func checkRunConfig(t *testing.T, c twoBus) {
	a, _ := filepath.Abs(c.a)
	b, _ := filepath.Abs(c.b)
	dir := t.TempDir()
	relA, _ := filepath.Rel(dir, a)
	relB, _ := filepath.Rel(dir, b)
	file := filepath.Join(dir, "candec.yaml")
	if err := os.WriteFile(file, []byte("dbc:\n  - can0="+relA+"\n  - can1="+relB+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := dbc.BusFiles{Interfaces: map[string][]string{"can0": {a}, "can1": {b}}}
	for _, tc := range []struct {
		name, file string
		over       []service.Override
	}{
		{"file", file, nil},
		{"variable", "", []service.Override{{Where: "environment CANDEC_DBC", Key: "dbc", Value: "can0=" + a + ",can1=" + b}}},
		{"flags", "", []service.Override{{Where: "flag --dbc", Key: "dbc", Value: "can0=" + a + ",can1=" + b}}},
	} {
		cfg, err := service.LoadConfig(tc.file, tc.over)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := cfg.DBCFiles()
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v (%v), want %+v", tc.name, got, err, want)
			continue
		}
		buses, err := dbc.LoadBuses(context.Background(), got)
		if err != nil {
			t.Fatal(err)
		}
		cfg.MetricsAddr, cfg.TopicTemplate = "", "yukart/vehicle/{message}/{signal}" // the RAV4's DBCs repeat signal names
		if _, err := service.NewBuses(cfg, buses, nil, nil); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func total(m map[string][]string) int {
	n := 0
	for _, v := range m {
		n += len(v)
	}
	return n
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestDBCFlagErrors: every command that takes a DBC refuses the same
// mistakes with the same words, naming the value, the file or the
// interface; a missing file is named as the file, not as IFACE=FILE.
func TestDBCFlagErrors(t *testing.T) {
	c := twoBuses(t)[0]
	missing := filepath.Join(t.TempDir(), "nope.dbc")
	bad := []struct {
		name, value, want string
		// capture: the mistake shows only once the capture is read
		// (so not for ingest and run, whose buses come live).
		capture bool
	}{
		{"empty file", "can0=", `"can0=" names no file after =`, false},
		{"empty interface", "=" + c.a, `names no interface before =`, false},
		{"empty value", ",", "want [IFACE=]FILE[,FILE]: empty value", false},
		{"two DBCs for one bus", "can0=" + c.a + ",can0=" + c.b, "can0 has two DBCs, " + c.a + " and " + c.b, false},
		{"missing file", "can0=" + missing, "open " + missing + ": no such file or directory (the DBC of can0)", false},
		{"an interface the capture lacks", "can0=" + c.a + ",can5=" + c.b, "--dbc can5=" + c.b + ": no interface can5 in " + c.capture + " (its interfaces are can0, can1)", true},
		// Nothing decoded: the interface is the error, not an empty capture.
		{"only an interface the capture lacks", "can5=" + c.b, "--dbc can5=" + c.b + ": no interface can5 in " + c.capture + " (its interfaces are can0, can1)", true},
	}
	out := filepath.Join(t.TempDir(), "out")
	commands := []struct {
		name string
		args func(dbcValue string) []string
		live bool // the buses come live: no capture to check
	}{
		{"decode", func(v string) []string { return []string{"decode", "--dbc", v, c.capture} }, false},
		{"decode --policy", func(v string) []string { return []string{"decode", "--policy", "default", "--dbc", v, c.capture} }, false},
		{"tune", func(v string) []string { return []string{"tune", "--dbc", v, c.capture} }, false},
		{"tune --write-policy", func(v string) []string {
			return []string{"tune", "--write-policy", out + ".yaml", "--dbc", v, c.capture}
		}, false},
		{"plot", func(v string) []string {
			return []string{"plot", "--signals", "*", "-o", out + ".svg", "--dbc", v, c.capture}
		}, false},
		{"ingest", func(v string) []string {
			return []string{"ingest", "--broker", "mqtt://127.0.0.1:1", "--out-dir", out, "--dbc", v}
		}, true},
		{"run", func(v string) []string { return []string{"run", "--broker", "mqtt://127.0.0.1:1", "--dbc", v} }, true},
	}
	for _, cmd := range commands {
		for _, b := range bad {
			if b.capture && cmd.live {
				continue
			}
			t.Run(cmd.name+"/"+b.name, func(t *testing.T) {
				_, stderr, code := runCmd(t, cmd.args(b.value)...)
				if code == 0 || !strings.Contains(stderr, b.want) || strings.Contains(stderr, "open can0=") {
					t.Errorf("exit %d, want an error with %q:\n%s", code, b.want, stderr)
				}
			})
		}
	}
	// bench's fleet sends one bus: its --fleet-dbc refuses IFACE=, and
	// the same mistakes.
	for _, v := range []struct{ value, want string }{
		{"can0=" + c.a, "the fleet's cars send one bus: give its DBC as FILE[,FILE], not IFACE=FILE"},
		{"can0=", `"can0=" names no file after =`},
	} {
		if _, err := fleetDBCFiles(v.value); err == nil || cli.ExitCode(err) != 2 || !strings.Contains(err.Error(), v.want) {
			t.Errorf("bench --fleet-dbc %s: got %v, want exit 2 with %q", v.value, err, v.want)
		}
	}
	if got, err := fleetDBC(c.a); err != nil || !filepath.IsAbs(got) {
		t.Errorf("bench --fleet-dbc %s: got %q (%v), want it absolute", c.a, got, err)
	}
}
