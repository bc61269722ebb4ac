package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/internal/testkit/brokertest"
)

// benchCampaignFiles makes a key pair and signs with candec's own
// commands a campaign of a policy capping every signal at 1 Hz for
// vehicles, with extra flags of campaign sign; it returns the campaign
// and the public key.
func benchCampaignFiles(t *testing.T, dir, name, vehicles string, extra ...string) (camp, pub string) {
	t.Helper()
	key := filepath.Join(dir, name+".key")
	if _, errs, code := runCmd(t, "campaign", "keygen", "-o", key); code != 0 {
		t.Fatalf("campaign keygen: %s", errs)
	}
	policy := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(policy, []byte("defaults:\n  max_rate: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	camp = filepath.Join(dir, name+".json")
	args := append([]string{"campaign", "sign", "--key", key, "--policy", policy, "--version", "3", "--vehicles", vehicles,
		"--dbc", "../../testdata/yukart.dbc", "-o", camp}, extra...)
	if _, errs, code := runCmd(t, args...); code != 0 {
		t.Fatalf("campaign sign: %s", errs)
	}
	return camp, key + ".pub"
}

// TestBenchCampaignFlags: bench's campaign flags refuse, with exit 2
// and before any car is made, what no run could use: a flag without
// the other, a push outside the measured window, and a campaign every
// car would refuse (another key, no car of the fleet, another DBC, not
// valid yet at the push, not a campaign).
func TestBenchCampaignFlags(t *testing.T) {
	dir := t.TempDir()
	camp, pub := benchCampaignFiles(t, dir, "c", "car0000[01]")
	_, otherPub := benchCampaignFiles(t, dir, "other", "car0000[01]")
	nobody, nobodyPub := benchCampaignFiles(t, dir, "nobody", "kart*")
	later, laterPub := benchCampaignFiles(t, dir, "later", "car*", "--not-before", time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	otherDBC := filepath.Join(dir, "other.dbc")
	b, err := os.ReadFile("../../testdata/yukart.dbc")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(otherDBC, append(b, "\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	notCampaign := filepath.Join(dir, "not.json")
	if err := os.WriteFile(notCampaign, []byte(`{"policy":"defaults: {}"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	fleet := []string{"bench", "--fleet", "4", "--duration", "4s", "--warmup", "1s", "--no-results",
		"--fleet-dbc", "../../testdata/yukart.dbc", "--fleet-capture", "../../testdata/idle.log"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no --fleet", []string{"bench", "--campaign", camp}, "--campaign needs --fleet N"},
		{"a key alone", append(fleet, "--campaign-key", pub), "--campaign-key and --campaign-at need --campaign FILE"},
		{"no key", append(fleet, "--campaign", camp), "--campaign needs --campaign-key"},
		{"at 0 %", append(fleet, "--campaign", camp, "--campaign-key", pub, "--campaign-at", "0%"), "inside the measured window"},
		{"at the end", append(fleet, "--campaign", camp, "--campaign-key", pub, "--campaign-at", "4s"), "inside the measured window"},
		{"at what", append(fleet, "--campaign", camp, "--campaign-key", pub, "--campaign-at", "half"), "a share of --duration"},
		{"another key", append(fleet, "--campaign", camp, "--campaign-key", otherPub), "the cars would refuse it: campaign refused (key)"},
		{"no car", append(fleet, "--campaign", nobody, "--campaign-key", nobodyPub), `for vehicles "kart*", which none of the 4 cars`},
		{"another DBC", append(fleet, "--campaign", camp, "--campaign-key", pub, "--fleet-dbc", otherDBC), "campaign refused (dbc)"},
		{"not yet", append(fleet, "--campaign", later, "--campaign-key", laterPub), "campaign refused (not_before)"},
		{"not a campaign", append(fleet, "--campaign", notCampaign, "--campaign-key", pub), "campaign refused (format)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs, code := runCmd(t, tt.args...)
			if code != 2 || !strings.Contains(errs, tt.want) {
				t.Errorf("bench %s: exit %d, %q; want exit 2 with %q", strings.Join(tt.args[1:], " "), code, errs, tt.want)
			}
		})
	}
}

// TestBenchFleetCampaign runs `candec bench --fleet 4 --campaign …`
// for real (mosquitto, an ingest of this binary): the campaign goes to
// the two cars its glob names, both apply it, and the table reports
// them after the push under version 3 at far fewer values a second
// than before, nothing lost. benchmarks/fleet: TestRunCampaign checks
// the windows themselves.
func TestBenchFleetCampaign(t *testing.T) {
	if testing.Short() {
		t.Skip("starts mosquitto and an ingest")
	}
	brokertest.RequireMosquitto(t)
	t.Setenv(asCandecEnv, "1") // the ingest is this binary
	dir := t.TempDir()
	camp, pub := benchCampaignFiles(t, dir, "c", "car0000[01]")
	out, errs, code := runCmd(t, "bench", "--fleet", "4", "--duration", "3s", "--warmup", "1s", "--no-results",
		"--fleet-dbc", "../../testdata/yukart.dbc", "--fleet-capture", "../../testdata/idle.log",
		"--campaign", camp, "--campaign-key", pub, "--campaign-at", "50%", "--logs", filepath.Join(dir, "logs"))
	if code != 0 {
		t.Fatalf("bench: exit %d\n%s\n%s", code, out, errs)
	}
	row := func(phase, version string) []string {
		m := regexp.MustCompile(`(?m)^\s+` + phase + `\s+` + version + `\s+(\d+)\s+[\d.]+\s+\d+\s+\d+\s+[\d.]+\s+([\d.]+)$`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no %s row of version %s in\n%s", phase, version, out)
		}
		return m[1:]
	}
	before, others, after := row("before", "0"), row("after", "0"), row("after", "3")
	if !strings.Contains(out, `campaign version 3 for vehicles "car0000[01]", pushed 1.5s into the window to 2 cars: applied by 2 (`) ||
		!regexp.MustCompile(`lost\s+0 windows \(duplicates 0\)`).MatchString(out) ||
		before[0] != "4" || others[0] != "2" || after[0] != "2" || atof(t, after[1])*3 > atof(t, before[1]) {
		t.Errorf("bench's report:\n%s", out)
	}
}

func atof(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
