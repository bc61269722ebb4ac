package child

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrKilled: the child did not exit within the timeout after SIGTERM and
// was killed.
var ErrKilled = errors.New("child: killed")

// Process is a running child.
type Process struct {
	cmd    *exec.Cmd
	exited chan struct{}

	mu  sync.Mutex
	err error // Wait's result, once exited
}

// Start starts cmd, set up to die with its parent, and waits for it in
// the background.
func Start(cmd *exec.Cmd) (*Process, error) {
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, exited: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.exited)
	}()
	return p, nil
}

// PID returns the process ID.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited is closed when the child has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Err returns how the child exited, once it has; nil before.
func (p *Process) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Stop sends SIGTERM to the child's PID and waits for it to exit; after
// timeout it sends SIGKILL and returns an error wrapping ErrKilled.
// Otherwise it returns the child's exit error, nil for a clean exit. It
// is safe to call more than once.
func (p *Process) Stop(timeout time.Duration) error {
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
	return fmt.Errorf("%w: pid %d did not stop within %v of SIGTERM", ErrKilled, p.PID(), timeout)
}

// Wait waits for the child to exit or ctx to end.
func (p *Process) Wait(ctx context.Context) error {
	select {
	case <-p.exited:
		return p.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Tail returns the last n lines of a file, such as a child's log, or
// why it cannot be read.
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
