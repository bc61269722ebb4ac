package child

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func sh(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("sh")
	if err != nil {
		t.Skip(err)
	}
	return p
}

func TestStopCleanExit(t *testing.T) {
	p, err := Start(exec.Command(sh(t), "-c", "exec sleep 30"))
	if err != nil {
		t.Fatal(err)
	}
	if p.PID() <= 0 {
		t.Errorf("PID: got %d, want > 0", p.PID())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := p.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait on a running child: got %v, want the context's deadline", err)
	}
	// sleep dies of SIGTERM: an exit error, but not a kill after the
	// timeout.
	if err := p.Stop(5 * time.Second); err == nil || errors.Is(err, ErrKilled) {
		t.Errorf("Stop: got %v, want the SIGTERM exit status", err)
	}
	select {
	case <-p.Exited():
	default:
		t.Error("Exited not closed after Stop")
	}
	if err := p.Wait(context.Background()); err == nil || err.Error() != p.Err().Error() {
		t.Errorf("Wait after Stop: got %v, want %v", err, p.Err())
	}
}

func TestStopKillsStubbornChild(t *testing.T) {
	started := filepath.Join(t.TempDir(), "started")
	p, err := Start(exec.Command(sh(t), "-c", "trap '' TERM; touch "+started+"; exec sleep 30"))
	if err != nil {
		t.Fatal(err)
	}
	for { // wait until the trap is set
		if _, err := os.Stat(started); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := p.Stop(200 * time.Millisecond); !errors.Is(err, ErrKilled) {
		t.Errorf("Stop of a child ignoring SIGTERM: got %v, want ErrKilled", err)
	}
	if err := p.Stop(time.Second); err == nil || errors.Is(err, ErrKilled) {
		t.Errorf("second Stop: got %v, want the SIGKILL exit status", err)
	}
}

func TestStartMissingBinary(t *testing.T) {
	if _, err := Start(exec.Command(filepath.Join(t.TempDir(), "missing"))); err == nil {
		t.Error("Start of a missing binary: got nil, want an error")
	}
}

func TestTail(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name, text string
		n          int
		want       string
	}{
		{"fewer lines than n", "a\nb\n", 5, "a\nb"},
		{"the last n", "a\nb\nc\nd\n", 2, "c\nd"},
		{"no final newline", "a\nb\nc", 1, "c"},
		{"empty", "", 3, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_"))
			if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := Tail(path, tt.n); got != tt.want {
				t.Errorf("Tail(%q, %d) = %q, want %q", tt.text, tt.n, got, tt.want)
			}
		})
	}
	if got := Tail(filepath.Join(dir, "missing"), 3); !strings.Contains(got, "no such file") {
		t.Errorf("Tail of a missing file = %q, want why it cannot be read", got)
	}
}
