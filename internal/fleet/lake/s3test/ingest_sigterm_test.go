package s3test

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/internal/base/child"
	"github.com/yukart/candec/internal/lab/mosquitto"
	"github.com/yukart/candec/internal/testkit/brokertest"
)

// testIngestSIGTERM: candec ingest, a real process, with --out-dir
// s3://lake/ingest-sigterm, holds a car's windows (its roll an hour
// away) until SIGTERM: it then commits them into the bucket, its
// uploads outliving the signal that ended its run, acknowledges them
// and exits 0. The lake read back with DuckDB holds every row and
// value; its one manifest names every window once.
func testIngestSIGTERM(t *testing.T, srv *server, exe string) {
	b := startBroker(t)
	port, err := mosquitto.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	metrics := "127.0.0.1:" + strconv.Itoa(port)
	p, log := startIngestProcess(t, exe, srv.env(writerKey, writerSecret), "ingest", "--broker", b.URL,
		"--dbc", filepath.Join(root, "testdata", "yukart.dbc"), "--out-dir", "s3://lake/ingest-sigterm",
		"--id", "sigterm", "--roll-age", "1h", "--metrics", metrics, "--connect-timeout", "10s")
	waitFor(t, p, log, "its subscription", func() bool { return strings.Contains(readLog(log), "subscribed") })

	car := carStream{id: "kart07", windows: carWindows(t, envelope.JSON, 1791563880000000000)}
	car.distinct = len(car.windows)
	c := brokertest.Connect(t, b.URL)
	for _, w := range car.windows {
		c.PublishQoS1("fleet/kart07/yukart/window", w, false)
	}
	waitFor(t, p, log, "every window taken", func() bool {
		return windowsTaken(metrics, "sigterm", "kart07") == len(car.windows)
	})
	if err := syscall.Kill(p.PID(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Exited():
	case <-time.After(60 * time.Second):
		t.Fatalf("candec ingest has not exited 60 s after SIGTERM:\n%s", readLog(log))
	}
	if err := p.Err(); err != nil {
		t.Fatalf("candec ingest after SIGTERM: %v, want exit status 0\n%s", err, readLog(log))
	}
	t.Logf("%s", lastLine(readLog(log)))

	dir := t.TempDir()
	rels := download(t, srv, "ingest-sigterm", dir)
	checkFleet(t, dir, map[string]*written{car.id: expected(t, car)})
	checkRecord(t, dir, rels, "sigterm", 1, []carStream{car})
}

// startIngestProcess starts exe with args and the AWS variables of
// env added, its standard error into a file whose name it returns;
// the test's cleanup stops it by its PID.
func startIngestProcess(t *testing.T, exe string, env map[string]string, args ...string) (*child.Process, string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "stderr")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(exe, args...)
	cmd.Dir = filepath.Dir(exe)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = f, f
	p, err := child.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(5 * time.Second) })
	return p, log
}

// waitFor waits, at most 60 s, until cond holds, failing the test if
// p exits first.
func waitFor(t *testing.T, p *child.Process, log, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		select {
		case <-p.Exited():
			t.Fatalf("candec ingest exited (%v) before %s:\n%s", p.Err(), what, readLog(log))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 60 s:\n%s", what, readLog(log))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func readLog(name string) string {
	b, _ := os.ReadFile(name)
	return string(b)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// windowsTaken reads candec_ingest_windows_total of the instance and
// vehicle from the metrics at addr; -1 when it cannot.
func windowsTaken(addr, instance, vehicle string) int {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	want := fmt.Sprintf(`candec_ingest_windows_total{instance=%q,vehicle=%q} `, instance, vehicle)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), want); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return -1
			}
			return int(n)
		}
	}
	return -1
}
