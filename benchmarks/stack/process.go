package stack

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/yukart/candec/internal/base/child"
	"github.com/yukart/candec/internal/base/defaults"
)

// Errors.
var (
	// ErrExited: a process exited while it was expected to run.
	ErrExited = errors.New("stack: process exited")
)

// DefaultStopTimeout is how long Stop waits after SIGTERM before it
// sends SIGKILL.
const DefaultStopTimeout = 10 * time.Second

// Process is a child process the bench started: PID, Exited, Err and
// Wait come from child.Process.
type Process struct {
	*child.Process
	// Name names it in errors ("decoder", "replay").
	Name string
	// Log is the file that holds its standard error (and standard
	// output unless Stdout was given).
	Log string
}

// Options configure StartProcess.
type Options struct {
	// Dir is where the log file goes.
	Dir string
	// Stdout receives the process's standard output; nil sends it to the
	// log file.
	Stdout *os.File
	// Env, when not nil, is the process's whole environment; nil
	// inherits the bench's.
	Env []string
}

// StartProcess starts name's command; its standard error goes to
// <dir>/<name>.log.
func StartProcess(name string, o Options, exe string, args ...string) (*Process, error) {
	log := filepath.Join(o.Dir, name+".log")
	f, err := os.Create(log)
	if err != nil {
		return nil, fmt.Errorf("stack: %s: %w", name, err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Stderr = f
	cmd.Stdout = f
	if o.Stdout != nil {
		cmd.Stdout = o.Stdout
	}
	cmd.Env = o.Env
	c, err := child.Start(cmd)
	// The child has its own descriptor of the log.
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("stack: start %s (%s): %w", name, exe, err)
	}
	return &Process{Process: c, Name: name, Log: log}, nil
}

// Running returns nil while the process runs, or an error wrapping
// ErrExited with its exit status and the last line of its log. The error
// is one line: the log's last line is where a candec command says why it
// stopped; the rest stays in the log.
func (p *Process) Running() error {
	select {
	case <-p.Exited():
		return fmt.Errorf("%w: %s: %v: %s", ErrExited, p.Name, p.Err(), child.Tail(p.Log, 1))
	default:
		return nil
	}
}

// Stop sends SIGTERM and waits for the process to exit, then SIGKILL
// after timeout (≤ 0: DefaultStopTimeout). It returns the process's
// exit error, nil for a clean exit, and is safe to call more than once.
func (p *Process) Stop(timeout time.Duration) error {
	timeout = defaults.Positive(timeout, DefaultStopTimeout)
	err := p.Process.Stop(timeout)
	if errors.Is(err, child.ErrKilled) {
		return fmt.Errorf("stack: %s did not stop within %v of SIGTERM; killed", p.Name, timeout)
	}
	return err
}
