package stack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/yukart/candec/internal/lab/mosquitto"
)

// ErrNoMosquitto: the mosquitto binary is not installed.
var ErrNoMosquitto = errors.New("stack: mosquitto not found on PATH, in /usr/sbin or /usr/local/sbin; install the Debian package mosquitto (apt-get install mosquitto), or pass --broker URL")

// findMosquitto is mosquitto.Find; a test replaces it to check
// ErrNoMosquitto.
var findMosquitto = mosquitto.Find

// Mosquitto is a private broker: a Process named "broker" whose Log
// holds its standard output and error (its own log is
// internal/lab/mosquitto's LogFile in the run's directory).
type Mosquitto struct {
	*Process
	// Addr is 127.0.0.1:port; URL mqtt://127.0.0.1:port.
	Addr, URL string
	// Version is the broker's version line.
	Version string
}

// StartMosquitto starts a private mosquitto in dir on a free port of
// 127.0.0.1 and waits until it serves connections (mosquitto.Start).
// Without mosquitto installed it returns ErrNoMosquitto.
func StartMosquitto(ctx context.Context, dir string) (*Mosquitto, error) {
	exe, err := findMosquitto()
	if err != nil {
		return nil, ErrNoMosquitto
	}
	log := filepath.Join(dir, "broker.log")
	out, err := os.Create(log)
	if err != nil {
		return nil, fmt.Errorf("stack: broker: %w", err)
	}
	// The child holds its own descriptor; ours is not needed once it runs.
	defer out.Close()
	p, err := mosquitto.Start(ctx, mosquitto.Options{Binary: exe, Dir: dir, Output: out})
	if err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	return &Mosquitto{Process: &Process{Process: p.Process, Name: "broker", Log: log}, Addr: p.Addr, URL: p.URL, Version: mosquitto.Version(exe)}, nil
}
