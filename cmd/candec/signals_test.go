package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/yukart/candec/internal/base/child"
	"github.com/yukart/candec/internal/testkit"
	"github.com/yukart/candec/internal/testkit/brokertest"
)

// promptly bounds how long a command may take to stop on a signal. It
// is a liveness bound, not a speed one: the machine may be busy.
const promptly = 10 * time.Second

// startCandec starts this test binary as candec (see TestMain) with
// args, reading stdin, as a real process that real signals reach. Its
// standard error is returned; it is stopped by PID when the test ends.
func startCandec(t *testing.T, stdin io.Reader, args ...string) (*child.Process, *testkit.SyncBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asCandecEnv+"=1")
	cmd.Stdin = stdin
	var stderr testkit.SyncBuffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	p, err := child.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(5 * time.Second) })
	return p, &stderr
}

// sendSignal sends sig to p.
func sendSignal(t *testing.T, p *child.Process, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(p.PID(), sig); err != nil {
		t.Fatalf("kill %d %v: %v", p.PID(), sig, err)
	}
}

// exitOf waits for p to exit, at most within, and returns its exit
// status: -1 for a death by signal.
func exitOf(t *testing.T, p *child.Process, within time.Duration, stderr *testkit.SyncBuffer) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	err := p.Wait(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("candec did not exit within %v of the signal\n%s", within, stderr.String())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// waitStderr waits until stderr has said want n times.
func waitStderr(t *testing.T, p *child.Process, stderr *testkit.SyncBuffer, want string, n int) {
	t.Helper()
	deadline := time.Now().Add(promptly)
	for strings.Count(stderr.String(), want) < n {
		select {
		case <-p.Exited():
			t.Fatalf("candec exited (%v) before it said %q %d times:\n%s", p.Err(), want, n, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("candec did not say %q %d times within %v:\n%s", want, n, promptly, stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRunSIGHUPWithFIFOPolicy: a SIGHUP while the policy path is a FIFO
// is refused at once and logged, later SIGHUPs are still served, and
// SIGTERM then stops the service cleanly: a reload never blocks another
// reload or the shutdown. A real process, real signals, a real broker.
func TestRunSIGHUPWithFIFOPolicy(t *testing.T) {
	b := brokertest.Start(t)
	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe("yukart/decoder/status")
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte("defaults:\n  max_rate: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, stderr := startCandec(t, nil, "run", "--broker", b.URL, "--dbc", yukartDBC, "--policy", pol,
		"--metrics-addr", "", "--client-id", "cmd-run-fifo-policy-test")
	sub.WaitFor("online", func(m []brokertest.Message) bool { return len(m) > 0 && string(m[len(m)-1].Payload) == "online" })
	if err := os.Remove(pol); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(pol, 0o600); err != nil {
		t.Fatal(err)
	}
	refused := pol + " is a FIFO (named pipe), not a regular file"
	for i := 1; i <= 3; i++ {
		sendSignal(t, p, syscall.SIGHUP)
		waitStderr(t, p, stderr, refused, i)
	}
	if err := os.Remove(pol); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pol, []byte("defaults:\n  max_rate: 10\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sendSignal(t, p, syscall.SIGHUP)
	waitStderr(t, p, stderr, "policy reloaded: ", 1)
	sendSignal(t, p, syscall.SIGTERM)
	if code := exitOf(t, p, promptly, stderr); code != 0 {
		t.Fatalf("got exit status %d after SIGTERM, want 0\n%s", code, stderr.String())
	}
}

// bigDBC writes a DBC of 1,000 CAN FD messages of 48 signals each
// (2.8 MB), which takes `run` a while to load.
func bigDBC(t *testing.T) string {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("VERSION \"\"\n\nBU_: ECU\n\n")
	for m := 1; m <= 1000; m++ {
		fmt.Fprintf(&sb, "BO_ %d Msg%d: 48 ECU\n", m, m)
		for s := range 48 {
			fmt.Fprintf(&sb, " SG_ Sig%d_%d : %d|8@1+ (0.5,-10) [-10|117.5] \"unit\" ECU\n", m, s, s*8)
		}
		sb.WriteString("\n")
	}
	return writeFile(t, t.TempDir(), "big.dbc", sb.String())
}

// waitOpened waits until some process opens path (inotify IN_OPEN) and
// reports whether one did within promptly.
func waitOpened(t *testing.T, fd int) bool {
	t.Helper()
	buf := make([]byte, 4096)
	deadline := time.Now().Add(promptly)
	for time.Now().Before(deadline) {
		n, err := syscall.Read(fd, buf)
		if n > 0 {
			return true
		}
		if err != nil && !errors.Is(err, syscall.EAGAIN) {
			t.Fatalf("read inotify: %v", err)
		}
		time.Sleep(time.Millisecond)
	}
	return false
}

// TestRunSIGHUPDuringStart: SIGHUPs from the start of `run` on, sent
// without a pause while it loads a big DBC, neither kill it (the
// signal's default, exit status 129 in a shell) nor are lost: the
// service comes up, reads its policy again and logs it, and stops
// cleanly on SIGTERM. The first SIGHUP goes once the process has opened
// the DBC, which `run` reads after its start.
func TestRunSIGHUPDuringStart(t *testing.T) {
	b := brokertest.Start(t)
	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe("yukart/decoder/status")
	dbcPath := bigDBC(t)
	pol := writeFile(t, t.TempDir(), "policy.yaml", "defaults:\n  max_rate: 1\n")
	in, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		t.Skipf("no inotify: %v", err)
	}
	defer syscall.Close(in)
	if _, err := syscall.InotifyAddWatch(in, dbcPath, syscall.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	p, stderr := startCandec(t, nil, "run", "--broker", b.URL, "--dbc", dbcPath, "--policy", pol,
		"--metrics-addr", "", "--client-id", "cmd-run-early-hup-test")
	if !waitOpened(t, in) {
		t.Fatalf("candec did not open the DBC within %v\n%s", promptly, stderr.String())
	}
	online := func() bool {
		m := sub.Messages()
		return len(m) > 0 && string(m[len(m)-1].Payload) == "online"
	}
	sent := 0
	deadline := time.Now().Add(60 * time.Second)
	for !online() {
		select {
		case <-p.Exited():
			t.Fatalf("candec exited (%v) after %d SIGHUPs during its start, want it to run on\n%s", p.Err(), sent, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("candec did not come online within 60 s\n%s", stderr.String())
		}
		sendSignal(t, p, syscall.SIGHUP)
		sent++
		time.Sleep(2 * time.Millisecond)
	}
	t.Logf("%d SIGHUPs during the start", sent)
	// The SIGHUPs of the start make a reload once the service runs.
	waitStderr(t, p, stderr, "policy reloaded: ", 1)
	sendSignal(t, p, syscall.SIGTERM)
	if code := exitOf(t, p, promptly, stderr); code != 0 {
		t.Fatalf("got exit status %d after SIGTERM, want 0\n%s", code, stderr.String())
	}
}

// unread returns how many bytes wait in the pipe whose write end is w.
func unread(t *testing.T, w *os.File) int {
	t.Helper()
	var n int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, w.Fd(), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); errno != 0 {
		t.Fatalf("FIONREAD: %v", errno)
	}
	return int(n)
}

// TestSilentPipeStopsOnSignal: every command that reads a capture from a
// pipe stops at once on SIGTERM and on SIGINT while the pipe is silent
// (its writer open, sending nothing), with a non-zero exit status, not
// killed by the signal and not exit 0: standard input from a pipe, and a
// FIFO named as the capture. Each runs as a real process; the signal
// goes once it has read the one line the pipe sent, so it is waiting on
// the pipe.
func TestSilentPipeStopsOnSignal(t *testing.T) {
	b := brokertest.Start(t)
	dir := t.TempDir()
	commands := []struct {
		name string
		args []string // the capture is the last
	}{
		{"convert", []string{"convert", "CAPTURE", filepath.Join(dir, "out.log")}},
		{"replay", []string{"replay", "--broker", b.URL, "CAPTURE"}},
		{"tune", []string{"tune", "--dbc", yukartDBC, "CAPTURE"}},
		{"plot", []string{"plot", "--dbc", yukartDBC, "--signals", "MOT_*", "-o", filepath.Join(dir, "plot.svg"), "CAPTURE"}},
		{"decode", []string{"decode", "--dbc", yukartDBC, "CAPTURE"}},
	}
	for _, c := range commands {
		for _, fifo := range []bool{false, true} {
			for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
				if fifo && sig == syscall.SIGINT {
					continue // one signal is enough to show the FIFO is read the same way
				}
				input := "stdin"
				if fifo {
					input = "FIFO"
				}
				t.Run(c.name+" "+input+" "+sig.String(), func(t *testing.T) {
					args := slices.Clone(c.args)
					var p *child.Process
					var stderr *testkit.SyncBuffer
					var pw *os.File
					if fifo {
						name := filepath.Join(t.TempDir(), "capture")
						if err := syscall.Mkfifo(name, 0o600); err != nil {
							t.Fatal(err)
						}
						args[slices.Index(args, "CAPTURE")] = name
						p, stderr = startCandec(t, nil, args...)
						// The open returns once candec has opened it too.
						opened := make(chan error, 1)
						go func() {
							var err error
							pw, err = os.OpenFile(name, os.O_WRONLY, 0)
							opened <- err
						}()
						select {
						case err := <-opened:
							if err != nil {
								t.Fatal(err)
							}
						case <-time.After(promptly):
							t.Fatalf("%s did not open the FIFO within %v\n%s", c.name, promptly, stderr.String())
						}
					} else {
						args[slices.Index(args, "CAPTURE")] = "-"
						pr, w, err := os.Pipe()
						if err != nil {
							t.Fatal(err)
						}
						pw = w
						p, stderr = startCandec(t, pr, args...)
						pr.Close()
					}
					defer pw.Close()
					if _, err := pw.WriteString("(1.000000) can0 0A0#0102030405060708\n"); err != nil {
						t.Fatal(err)
					}
					deadline := time.Now().Add(promptly)
					for unread(t, pw) > 0 {
						if time.Now().After(deadline) {
							t.Fatalf("%s did not read its input within %v\n%s", c.name, promptly, stderr.String())
						}
						time.Sleep(5 * time.Millisecond)
					}
					select {
					case <-p.Exited():
						t.Fatalf("%s exited (%v) before the signal\n%s", c.name, p.Err(), stderr.String())
					default:
					}
					sendSignal(t, p, sig)
					code := exitOf(t, p, promptly, stderr)
					if code <= 0 {
						t.Fatalf("%s on %v while its %s is silent: got exit status %d (-1: killed by the signal), want a non-zero status\n%s", c.name, sig, input, code, stderr.String())
					}
					if msg := stderr.String(); !strings.Contains(msg, "interrupted") && !strings.Contains(msg, "context canceled") {
						t.Errorf("%s on %v: got %q on stderr, want it to say it was interrupted", c.name, sig, msg)
					}
				})
			}
		}
	}
}

// TestRunCatchesHUPBeforeInits: `candec run` catches SIGHUP in the init
// of internal/cmdkit/earlyhup, under a millisecond into the process, before
// the packages whose inits take candec's start (prometheus, plotting,
// the S3 client: about 8 ms of them), not in main after them: the
// window in which a SIGHUP still ends it with status 129 is the Go
// runtime's own start (docs/limits.md). GODEBUG=inittrace=1 shows the
// order.
func TestRunCatchesHUPBeforeInits(t *testing.T) {
	cmd := exec.Command(os.Args[0], "run", "-h")
	cmd.Env = append(os.Environ(), asCandecEnv+"=1", "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("candec run -h: %v\n%s", err, out)
	}
	at := func(pkg string) float64 {
		for _, l := range strings.Split(string(out), "\n") {
			var ms float64
			if strings.HasPrefix(l, "init "+pkg+" @") {
				if _, err := fmt.Sscanf(strings.TrimPrefix(l, "init "+pkg+" @"), "%f ms", &ms); err == nil {
					return ms
				}
			}
		}
		t.Fatalf("no init of %s in:\n%s", pkg, out)
		return 0
	}
	hup := at("github.com/yukart/candec/internal/cmdkit/earlyhup")
	for _, heavy := range []string{"github.com/prometheus/client_golang/prometheus", "github.com/yukart/candec/service"} {
		if h := at(heavy); hup >= h {
			t.Errorf("SIGHUP is caught at %.2f ms, after the init of %s at %.2f ms", hup, heavy, h)
		}
	}
	t.Logf("SIGHUP caught %.2f ms into the process", hup)
}
