package duckdbtest

import (
	"bytes"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// docQuery returns the SQL block of docs/campaigns.md that follows the
// line holding marker, with the lake's path put in.
func docQuery(t *testing.T, marker, lake string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "campaigns.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), marker)
	if !ok {
		t.Fatalf("docs/campaigns.md has no %q", marker)
	}
	_, rest, ok = strings.Cut(rest, "```sql\n")
	q, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatalf("docs/campaigns.md has no SQL block after %q", marker)
	}
	return strings.ReplaceAll(q, "'fleet-lake/", "'"+lake+"/")
}

// proc is a process the test started, stopped by its PID.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  bytes.Buffer
}

func start(t *testing.T, name, exe string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(exe, args...)}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop sends SIGTERM and waits for the process.
func (p *proc) stop(t *testing.T) {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
		t.Errorf("%s did not stop within 30 s of SIGTERM:\n%s", p.name, p.out.String())
	}
}

// freePort returns a port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// eventually runs f until it holds, for at most a minute.
func eventually(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestCampaignLake runs a fleet of two cars for real (mosquitto, two
// `candec run` with campaigns on, two replays, `candec ingest`), pushes
// a campaign to one of them mid-run with `candec campaign`, and runs
// the query of docs/campaigns.md on the lake the ingest wrote: the
// deliveries and values per vehicle and policy version.
func TestCampaignLake(t *testing.T) {
	mosq, err := exec.LookPath("mosquitto")
	if err != nil {
		mosq = "/usr/sbin/mosquitto"
	}
	if _, err := os.Stat(mosq); err != nil {
		if os.Getenv("CANDEC_REQUIRE_MOSQUITTO") == "1" {
			t.Fatal("mosquitto not found and CANDEC_REQUIRE_MOSQUITTO=1")
		}
		t.Skip("mosquitto not found")
	}
	exe := candec(t)
	dir := t.TempDir()
	port := freePort(t)
	conf := filepath.Join(dir, "mosquitto.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("listener %d 127.0.0.1\nallow_anonymous true\nset_tcp_nodelay true\n", port)), 0o600); err != nil {
		t.Fatal(err)
	}
	start(t, "mosquitto", mosq, "-c", conf)
	url := fmt.Sprintf("mqtt://127.0.0.1:%d", port)
	eventually(t, "mosquitto listening", func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	dbcFile, _ := filepath.Abs(filepath.Join(root, "testdata", "yukart.dbc"))
	capture, _ := filepath.Abs(filepath.Join(root, "testdata", "idle.log"))
	key := filepath.Join(dir, "campaign.key")
	runCandec(t, exe, "campaign", "keygen", "-o", key)

	lake := filepath.Join(dir, "fleet-lake")
	ingest := start(t, "ingest", exe, "ingest", "--broker", url, "--dbc", dbcFile, "--out-dir", lake, "--id", "i1", "--roll-age", "1s")
	for _, car := range []string{"kart01", "kart02"} {
		cfg := filepath.Join(dir, car+".yaml")
		text := strings.Join([]string{
			"broker: " + url, "client_id: candec-" + car, "dbc: " + dbcFile, "metrics_addr: ''",
			"raw_topic: cars/" + car + "/raw",
			"status_topic: fleet/" + car + "/yukart/decoder/status", "window_topic: fleet/" + car + "/yukart/window",
			"vehicle: " + car, "campaign_topic: fleet/" + car + "/yukart/policy", "campaign_key: " + key + ".pub",
			"campaign_state: " + filepath.Join(dir, car+".state"), "campaign_ack_topic: fleet/" + car + "/yukart/decoder/campaign", ""}, "\n")
		if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		start(t, "run "+car, exe, "run", "--config", cfg)
		start(t, "replay "+car, exe, "replay", "--broker", url, "--client-id", "replay-"+car, "--topic", "cars/"+car+"/raw", "--loop", capture)
	}
	status := func() string {
		out, _ := exec.Command(exe, "campaign", "status", "--broker", url).CombinedOutput()
		return string(out)
	}
	eventually(t, "both cars acknowledging", func() bool {
		s := status()
		return strings.Contains(s, "kart01") && strings.Contains(s, "kart02")
	})
	time.Sleep(3 * time.Second) // a few seconds of the built-in policy: the "before"

	policy := filepath.Join(dir, "slow.yaml")
	if err := os.WriteFile(policy, []byte("defaults:\n  max_rate: 5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	camp := filepath.Join(dir, "c1.json")
	runCandec(t, exe, "campaign", "sign", "--key", key, "--policy", policy, "--version", "1", "--vehicles", "kart01", "--dbc", dbcFile, "-o", camp)
	runCandec(t, exe, "campaign", "push", "--broker", url, camp)
	eventually(t, "kart01 applying version 1", func() bool {
		for _, l := range strings.Split(status(), "\n") {
			if f := strings.Fields(l); len(f) > 2 && f[0] == "kart01" && f[2] == "1" {
				return true
			}
		}
		return false
	})
	time.Sleep(3 * time.Second) // the "after"
	ingest.stop(t)
	t.Logf("status:\n%s\ningest:\n%s", status(), ingest.out.String())

	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := docQuery(t, "<!-- the query: deliveries and values -->", lake)
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer rows.Close()
	type res struct {
		deliveries      int64
		perSecond, mean float64
		lo, hi          int64
	}
	got := map[string]res{}
	var table strings.Builder
	for rows.Next() {
		var vehicle string
		var version int64
		var r res
		if err := rows.Scan(&vehicle, &version, &r.deliveries, &r.perSecond, &r.mean, &r.lo, &r.hi); err != nil {
			t.Fatal(err)
		}
		got[fmt.Sprintf("%s v%d", vehicle, version)] = r
		fmt.Fprintf(&table, "%s v%d: %d deliveries, %.1f/s, mean %.1f, %d..%d\n", vehicle, version, r.deliveries, r.perSecond, r.mean, r.lo, r.hi)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("the query of docs/campaigns.md:\n%s", table.String())
	before, after := got["kart01 v0"], got["kart01 v1"]
	if len(got) != 3 || got["kart02 v0"].deliveries == 0 || before.deliveries == 0 || after.deliveries == 0 {
		t.Fatalf("want rows of kart01 at versions 0 and 1 and of kart02 at 0, got %v", got)
	}
	// max_rate 5 against the built-in 20: MOT_Speed (a 100 Hz message)
	// is delivered at most 5 times a second, from about 20.
	if after.perSecond > 6 || before.perSecond < 2*after.perSecond {
		t.Errorf("kart01's MOT_Speed: %.1f/s before, %.1f/s after; want about 20, then at most 5", before.perSecond, after.perSecond)
	}
}
