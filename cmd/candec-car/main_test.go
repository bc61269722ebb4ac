package main

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// asCandecEnv, set to 1, makes the test binary run as the car's candec.
const asCandecEnv = "GO_TEST_AS_CANDEC"

func TestMain(m *testing.M) {
	if os.Getenv(asCandecEnv) == "1" {
		main() // exits with the command's status on an error
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// candec runs this test binary as the car's candec with args and
// returns its exit status and what it wrote.
func candec(t *testing.T, extraEnv []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), asCandecEnv+"=1"), extraEnv...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatalf("candec %s: %v", strings.Join(args, " "), err)
	}
	return 0, string(out)
}

// TestCarCommands: the car's binary lists exactly the car's commands,
// and a developer's command is unknown to it (exit status 2).
func TestCarCommands(t *testing.T) {
	code, out := candec(t, nil, "-h")
	if code != 0 {
		t.Fatalf("candec -h: exit status %d\n%s", code, out)
	}
	_, list, _ := strings.Cut(out, "Commands:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	var got []string
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			got = append(got, f[0])
		}
	}
	want := []string{"run", "decode", "convert", "dbc", "replay", "watch", "generate", "version"}
	if !slices.Equal(got, want) {
		t.Errorf("candec -h lists %v, want %v", got, want)
	}
	for _, lab := range []string{"demo", "plot", "tune", "ingest", "bench"} {
		if code, out := candec(t, nil, lab); code != 2 || !strings.Contains(out, `unknown command "`+lab+`"`) {
			t.Errorf("candec %s: exit status %d, %q; want 2 and unknown command", lab, code, out)
		}
	}
}

// TestRunCatchesHUPBeforeInits: the car's `candec run` catches SIGHUP in
// the init of internal/cmdkit/earlyhup, before the packages whose inits take
// its start (prometheus, the service), as the developer's binary does
// (cmd/candec's test of the same name). GODEBUG=inittrace=1 shows the
// order.
func TestRunCatchesHUPBeforeInits(t *testing.T) {
	code, out := candec(t, []string{"GODEBUG=inittrace=1"}, "run", "-h")
	if code != 0 {
		t.Fatalf("candec run -h: exit status %d\n%s", code, out)
	}
	at := func(pkg string) float64 {
		for _, l := range strings.Split(out, "\n") {
			var ms float64
			if strings.HasPrefix(l, "init "+pkg+" @") {
				if _, err := fmt.Sscanf(strings.TrimPrefix(l, "init "+pkg+" @"), "%f ms", &ms); err == nil {
					return ms
				}
			}
		}
		t.Fatalf("no init of %s in:\n%s", pkg, out)
		return 0
	}
	hup := at("github.com/yukart/candec/internal/cmdkit/earlyhup")
	for _, heavy := range []string{"github.com/prometheus/client_golang/prometheus", "github.com/yukart/candec/service"} {
		if h := at(heavy); hup >= h {
			t.Errorf("SIGHUP is caught at %.2f ms, after the init of %s at %.2f ms", hup, heavy, h)
		}
	}
}
