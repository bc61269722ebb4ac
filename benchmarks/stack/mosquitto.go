package stack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/yukart/candec/internal/mosquitto"
)

// ErrNoMosquitto: the mosquitto binary is not installed.
var ErrNoMosquitto = errors.New("stack: mosquitto not found on PATH, in /usr/sbin or /usr/local/sbin; install the Debian package mosquitto (apt-get install mosquitto), or pass --broker URL")

// findMosquitto is mosquitto.Find; a test replaces it to check
// ErrNoMosquitto.
var findMosquitto = mosquitto.Find

// Mosquitto is a private broker.
type Mosquitto struct {
	*mosquitto.Process
	// Name names it in errors: "broker".
	Name string
	// Log is the file that holds its standard output and error; its own
	// log is Process.Log.
	Log string
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
	m := &Mosquitto{Name: "broker", Log: filepath.Join(dir, "broker.log"), Version: mosquitto.Version(exe)}
	out, err := os.Create(m.Log)
	if err != nil {
		return nil, fmt.Errorf("stack: broker: %w", err)
	}
	// The child holds its own descriptor; ours is not needed once it runs.
	defer out.Close()
	p, err := mosquitto.Start(ctx, mosquitto.Options{Binary: exe, Dir: dir, Output: out})
	if err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	m.Process = p
	return m, nil
}

// Running returns nil while the broker runs, or an error wrapping
// ErrExited with its exit status and the end of its output.
func (m *Mosquitto) Running() error { return running(m.Process.Process, m.Name, m.Log) }

// Stop sends SIGTERM to the broker and waits for it to exit, then
// SIGKILL after timeout (≤ 0: DefaultStopTimeout). It returns the
// broker's exit error, nil for a clean exit, and is safe to call more
// than once.
func (m *Mosquitto) Stop(timeout time.Duration) error {
	return stop(m.Process.Process, m.Name, timeout)
}
