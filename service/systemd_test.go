package service

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var unitFile = filepath.Join("..", "deploy", "systemd", "candec.service")

// unitLines returns the unit's settings as key=value lines, without
// comments and blank lines.
func unitLines(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for l := range strings.SplitSeq(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestDeploySystemdUnit checks the settings the service relies on: the
// notify protocol and its watchdog (notify.go), the reload signal, the
// config and password paths, and the hardening.
func TestDeploySystemdUnit(t *testing.T) {
	lines := unitLines(t)
	for _, want := range []string{
		"Type=notify",
		"NotifyAccess=main",
		"WatchdogSec=10s",
		"Restart=on-failure",
		"ExecStart=/usr/bin/candec run --config /etc/candec/candec.yaml",
		"ExecReload=/bin/kill -HUP $MAINPID",
		"EnvironmentFile=-/etc/candec/environment",
		"DynamicUser=yes",
		"ProtectSystem=strict",
		"ProtectHome=yes",
		"PrivateTmp=yes",
		"NoNewPrivileges=yes",
		"CapabilityBoundingSet=",
		"RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
		"SystemCallFilter=@system-service",
	} {
		if !slices.Contains(lines, want) {
			t.Errorf("%s: no line %q", unitFile, want)
		}
	}
}

// TestDeploySystemdVerify runs systemd-analyze verify on the unit, with
// ExecStart's binary replaced by one that exists here (verify checks that
// it does): no output at all, no warning either.
func TestDeploySystemdVerify(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not installed (Debian package systemd): the unit is not verified")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(t.TempDir(), "candec.service")
	text := strings.ReplaceAll(string(data), "ExecStart=/usr/bin/candec ", "ExecStart="+exe+" ")
	if err := os.WriteFile(unit, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", unit).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify %s: %v\n%s", unitFile, err, out)
	}
}

// TestDeployCarConfig: the package's /etc/candec/candec.yaml loads, and
// names the files the package installs and the car broker's user.
func TestDeployCarConfig(t *testing.T) {
	cfg, err := LoadConfig(filepath.Join("..", "deploy", "package", "candec.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ key, got, want string }{
		{"dbc", strings.Join(cfg.DBC, ","), "/usr/share/candec/yukart.dbc"},
		{"policy", cfg.Policy, "/etc/candec/policy.yaml"},
		{"username", cfg.Username, "candec"},
		{"broker", cfg.Broker, "mqtt://127.0.0.1:1883"},
		{"metrics_addr", cfg.MetricsAddr, "127.0.0.1:9464"},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.key, c.got, c.want)
		}
	}
}
