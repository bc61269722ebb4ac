//go:build lean

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/yukart/candec/internal/earlyhup" // run's SIGHUP, caught from this process's start
)

// The lean build (go build -tags car,lean) is the car's candec without
// the commands that talk to the broker. run, replay and watch link the
// MQTT client (and with it net/http and crypto/tls), the Prometheus
// client and the service's YAML: their package initialisation, which Go
// runs whatever the command, made every start of decode or version cost
// twice a hello world's. Here each of the three hands itself, with its
// arguments, to mqttSibling: the car's build (-tags car) installed in
// the same folder as this executable, found nowhere else (not on PATH).
// It is executed in place of this program (execve), so the process
// stays the same: its PID, which systemd watches and signals, its
// standard streams, and the exit status, which is the sibling's own.
var (
	runRun    = viaSibling("run")
	runReplay = viaSibling("replay")
	runWatch  = viaSibling("watch")
)

// mqttSibling is the file name of the binary that runs run, replay and
// watch for the lean build.
const mqttSibling = "candec-mqtt"

// executable and execve are os.Executable and syscall.Exec; tests
// replace them, to see what would run without running it.
var (
	executable = os.Executable
	execve     = syscall.Exec
)

// viaSibling returns the command called name, which runs as
// mqttSibling's name command with the same arguments.
func viaSibling(name string) func(ctx context.Context, e env, args []string) error {
	return func(_ context.Context, _ env, args []string) error {
		exe, err := executable()
		if err != nil {
			return fmt.Errorf("%s: %w: find this executable: %w", name, errSibling, err)
		}
		path, err := siblingOf(exe)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		argv := append([]string{path, name}, args...)
		if name == earlyhup.Command {
			// A caught signal's handler does not survive execve, an
			// ignored one does: from here until the sibling's own
			// earlyhup catches it, SIGHUP is ignored rather than
			// ending the process (status 129). The sibling reads the
			// policy after that, so none is lost. (Should execve
			// fail, the process ends with its error.)
			signal.Ignore(syscall.SIGHUP)
		}
		err = execve(path, argv, os.Environ())
		return fmt.Errorf("%s: run %s: %w", name, path, err) // execve returns only on a failure
	}
}

// errSibling is wrapped by siblingOf's errors.
var errSibling = errors.New("the lean build runs it in " + mqttSibling + " (the car's build, -tags car), which must be installed beside it")

// siblingOf returns the path of mqttSibling beside the executable exe:
// a regular, executable file that is not exe itself (which would run
// itself for ever).
func siblingOf(exe string) (string, error) {
	if filepath.Base(exe) == mqttSibling {
		return "", fmt.Errorf("%s is itself the lean build: %w", exe, errSibling)
	}
	path := filepath.Join(filepath.Dir(exe), mqttSibling)
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return "", fmt.Errorf("%w: %w", errSibling, err)
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("%s is not a regular file: %w", path, errSibling)
	case fi.Mode().Perm()&0o111 == 0:
		return "", fmt.Errorf("%s is not executable: %w", path, errSibling)
	}
	if self, err := os.Stat(exe); err == nil && os.SameFile(fi, self) {
		return "", fmt.Errorf("%s is this lean build itself: %w", path, errSibling)
	}
	return path, nil
}
