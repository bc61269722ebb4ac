package stack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Errors.
var (
	// ErrExited: a process exited while it was expected to run.
	ErrExited = errors.New("stack: process exited")
)

// DefaultStopTimeout is how long Stop waits after SIGTERM before it
// sends SIGKILL.
const DefaultStopTimeout = 10 * time.Second

// Process is a child process the bench started.
type Process struct {
	// Name names it in errors ("decoder", "broker").
	Name string
	// Log is the file that holds its standard error (and standard
	// output unless Stdout was given).
	Log string

	cmd    *exec.Cmd
	logF   *os.File
	exited chan struct{}

	mu  sync.Mutex
	err error // Wait's result, once exited
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
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("stack: start %s (%s): %w", name, exe, err)
	}
	p := &Process{Name: name, Log: log, cmd: cmd, logF: f, exited: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		f.Close()
		close(p.exited)
	}()
	return p, nil
}

// PID returns the process ID.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Err returns how the process exited, once it has.
func (p *Process) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Running returns nil while the process runs, or an error wrapping
// ErrExited with its exit status and the end of its log.
func (p *Process) Running() error {
	select {
	case <-p.exited:
		return fmt.Errorf("%w: %s: %v\n%s", ErrExited, p.Name, p.Err(), Tail(p.Log, 15))
	default:
		return nil
	}
}

// Stop sends SIGTERM and waits for the process to exit, then SIGKILL
// after timeout (≤ 0: DefaultStopTimeout). It returns the process's
// exit error, nil for a clean exit, and is safe to call more than once.
func (p *Process) Stop(timeout time.Duration) error {
	if timeout <= 0 {
		timeout = DefaultStopTimeout
	}
	select {
	case <-p.exited:
		return p.Err()
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.Err()
	case <-time.After(timeout):
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
	return fmt.Errorf("stack: %s did not stop within %v of SIGTERM; killed", p.Name, timeout)
}

// Wait waits for the process to exit or ctx to end.
func (p *Process) Wait(ctx context.Context) error {
	select {
	case <-p.exited:
		return p.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Tail returns the last n lines of a file, or why it cannot be read.
func Tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
