package stack

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/internal/base/child"
	"github.com/yukart/candec/internal/lab/mosquitto"
	"github.com/yukart/candec/internal/testkit/brokertest"
)

func TestNoMosquittoErrorNamesThePackage(t *testing.T) {
	if !strings.Contains(ErrNoMosquitto.Error(), "Debian package mosquitto") {
		t.Errorf("ErrNoMosquitto = %q, want it to name the Debian package", ErrNoMosquitto)
	}
	findMosquitto = func() (string, error) { return "", mosquitto.ErrNotFound }
	defer func() { findMosquitto = mosquitto.Find }()
	m, err := StartMosquitto(context.Background(), t.TempDir())
	if !errors.Is(err, ErrNoMosquitto) || m != nil {
		t.Errorf("StartMosquitto without mosquitto = %v, %v; want ErrNoMosquitto", m, err)
	}
}

func TestStartMosquitto(t *testing.T) {
	brokertest.RequireMosquitto(t)
	ctx := context.Background()
	m, err := StartMosquitto(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop(0)
	if !strings.HasPrefix(m.Version, "mosquitto 2") && !strings.HasPrefix(m.Version, "mosquitto 1") {
		t.Errorf("Version = %q, want mosquitto N.N.N", m.Version)
	}
	c, err := net.DialTimeout("tcp", m.Addr, time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", m.Addr, err)
	}
	c.Close()
	if err := m.Running(); err != nil {
		t.Fatal(err)
	}
	if err := m.Stop(0); err != nil {
		t.Errorf("Stop = %v, want a clean exit", err)
	}
	if err := m.Running(); !errors.Is(err, ErrExited) {
		t.Errorf("Running after Stop = %v, want ErrExited", err)
	}
	if _, err := net.DialTimeout("tcp", m.Addr, 200*time.Millisecond); err == nil {
		t.Errorf("broker still accepts connections after Stop")
	}
}

func TestProcessStopKillsStubbornChild(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip(err)
	}
	p, err := StartProcess("stubborn", Options{Dir: t.TempDir()}, sh, "-c", "trap '' TERM; echo started >&2; exec sleep 30")
	if err != nil {
		t.Fatal(err)
	}
	// Wait until the trap is set.
	for child.Tail(p.Log, 1) != "started" {
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	err = p.Stop(200 * time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Stop = %v, want an error saying it was killed", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Stop took %v", d)
	}
	if got := child.Tail(p.Log, 5); got != "started" {
		t.Errorf("log = %q, want %q", got, "started")
	}
}
