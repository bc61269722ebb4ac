package mosquitto

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/yukart/candec/internal/base/child"
	"github.com/yukart/candec/internal/base/defaults"
)

// Errors.
var (
	// ErrNotFound: the mosquitto binary is not installed, or not where
	// Options.Binary says.
	ErrNotFound = errors.New("mosquitto: binary not found (install the Debian package mosquitto: apt-get install mosquitto)")
	// ErrKilled: the broker did not exit within the timeout after
	// SIGTERM and was killed.
	ErrKilled = child.ErrKilled
)

// Timeouts of the broker's life cycle.
const (
	// StartTimeout bounds how long the broker may take to accept
	// connections.
	StartTimeout = 10 * time.Second
	// DefaultStopTimeout is how long Stop waits after SIGTERM before it
	// sends SIGKILL when given no timeout.
	DefaultStopTimeout = 10 * time.Second
)

// Files Start writes in Options.Dir.
const (
	// ConfigFile is the generated configuration.
	ConfigFile = "mosquitto.conf"
	// LogFile is the broker's log.
	LogFile = "mosquitto.log"
)

// startTries is how many free ports Start tries: a free port can be
// taken by another program between the probe and mosquitto's bind.
const startTries = 5

// Find returns the path of the mosquitto binary: from PATH, or
// /usr/sbin or /usr/local/sbin (Debian installs it in sbin, which a
// user's PATH often lacks). The error wraps ErrNotFound.
func Find() (string, error) {
	if p, err := exec.LookPath("mosquitto"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w; looked on PATH, in /usr/sbin and /usr/local/sbin", ErrNotFound)
}

// Version returns "mosquitto 2.0.11" from the first line of
// `mosquitto -h`, or "mosquitto (unknown version)".
func Version(binary string) string {
	out, _ := exec.Command(binary, "-h").CombinedOutput() // exits 3 after printing help
	return parseVersion(string(out))
}

func parseVersion(help string) string {
	first, _, _ := strings.Cut(help, "\n")
	if v, ok := strings.CutPrefix(strings.TrimSpace(first), "mosquitto version "); ok && v != "" {
		return "mosquitto " + v
	}
	return "mosquitto (unknown version)"
}

// Options configure Start.
type Options struct {
	// Binary is the mosquitto binary; "" finds it with Find.
	Binary string
	// Dir holds ConfigFile and LogFile.
	Dir string
	// Port is the port on 127.0.0.1; 0 picks a free one. A given port
	// is how a stopped broker is restarted where its clients expect it.
	Port int
	// Verbose also logs notices of connections (log_type information),
	// with time stamps.
	Verbose bool
	// Output receives mosquitto's standard output and error; nil
	// discards them.
	Output io.Writer
	// PasswordFile, when set, refuses anonymous clients: only the users
	// of this file (made by mosquitto_passwd) may connect.
	PasswordFile string
	// CertFile and KeyFile, when set, make the listener TLS (the URL is
	// then mqtts://) with this PEM certificate and key; CAFile is the
	// CA that signed it.
	CAFile, CertFile, KeyFile string
	// RequireCertificate makes the TLS listener refuse a client without
	// a certificate signed by CAFile.
	RequireCertificate bool
	// IdentityAsUsername makes the client certificate's common name the
	// user name (with RequireCertificate); the password file is then not
	// used, and anonymous clients are refused.
	IdentityAsUsername bool
	// ACLFile, when set, is the broker's ACL file: what each user may
	// read and write.
	ACLFile string
	// Persistence keeps the broker's messages, sessions and queues in
	// Dir across a restart (mosquitto saves them when it stops).
	Persistence bool
	// Extra is configuration appended as is: a bridge's section, for
	// example (after every other line, so that a connection section
	// takes only its own).
	Extra string
}

// Process is a running mosquitto: PID, Exited, Err and Wait come from
// child.Process.
type Process struct {
	*child.Process
	// Addr is 127.0.0.1:port; URL mqtt://127.0.0.1:port.
	Addr, URL string
	// Log is the path of the broker's log.
	Log string
}

// Start starts mosquitto as o says and waits until it serves
// connections, ctx ends or StartTimeout passes. The caller stops it.
func Start(ctx context.Context, o Options) (*Process, error) {
	if o.Binary == "" {
		exe, err := Find()
		if err != nil {
			return nil, err
		}
		o.Binary = exe
	} else if _, err := os.Stat(o.Binary); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	if o.Port != 0 {
		return start(ctx, o, o.Port)
	}
	for range startTries {
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		p, err := start(ctx, o, port)
		if err == nil || ctx.Err() != nil {
			return p, err
		}
		// Try another port only when this one was taken.
		if _, statErr := os.Stat(filepath.Join(o.Dir, LogFile)); statErr == nil &&
			!strings.Contains(child.Tail(filepath.Join(o.Dir, LogFile), 10), "Address already in use") {
			return nil, err
		}
	}
	return nil, fmt.Errorf("mosquitto: could not bind a free port in %d tries", startTries)
}

// start starts mosquitto on port once.
func start(ctx context.Context, o Options, port int) (*Process, error) {
	conf := filepath.Join(o.Dir, ConfigFile)
	log := filepath.Join(o.Dir, LogFile)
	if err := os.WriteFile(conf, []byte(config(port, log, os.Geteuid() == 0, o)), 0o600); err != nil {
		return nil, fmt.Errorf("mosquitto: %w", err)
	}
	cmd := exec.Command(o.Binary, "-c", conf)
	if o.Output != nil {
		cmd.Stdout, cmd.Stderr = o.Output, o.Output
	}
	c, err := child.Start(cmd)
	if err != nil {
		return nil, fmt.Errorf("mosquitto: start %s: %w", o.Binary, err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	scheme := "mqtt://"
	if o.CertFile != "" {
		scheme = "mqtts://"
	}
	p := &Process{Process: c, Addr: addr, URL: scheme + addr, Log: log}
	if err := WaitListening(ctx, addr, p.Exited()); err != nil {
		_ = p.Stop(time.Second)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("mosquitto: on %s: %w\n%s", addr, err, child.Tail(log, 10))
	}
	return p, nil
}

// config returns the configuration of a broker on port that logs to
// logFile: localhost only, anonymous unless o has a password file or
// takes the user name from the client certificate, TCP_NODELAY,
// persistence in o.Dir only if asked, TLS when o has a certificate, o's
// ACL file, then o.Extra.
func config(port int, logFile string, root bool, o Options) string {
	var c strings.Builder
	fmt.Fprintf(&c, "listener %d 127.0.0.1\n", port)
	if o.CertFile != "" {
		fmt.Fprintf(&c, "certfile %s\nkeyfile %s\n", o.CertFile, o.KeyFile)
		if o.CAFile != "" {
			fmt.Fprintf(&c, "cafile %s\n", o.CAFile)
		}
		if o.RequireCertificate {
			c.WriteString("require_certificate true\n")
			if o.IdentityAsUsername {
				c.WriteString("use_identity_as_username true\n")
			}
		}
	}
	switch {
	case o.IdentityAsUsername && o.RequireCertificate && o.CertFile != "":
		c.WriteString("allow_anonymous false\n")
	case o.PasswordFile != "":
		fmt.Fprintf(&c, "allow_anonymous false\npassword_file %s\n", o.PasswordFile)
	default:
		c.WriteString("allow_anonymous true\n")
	}
	if o.ACLFile != "" {
		fmt.Fprintf(&c, "acl_file %s\n", o.ACLFile)
	}
	c.WriteString("set_tcp_nodelay true\n")
	if o.Persistence {
		fmt.Fprintf(&c, "persistence true\npersistence_location %s%c\n", o.Dir, filepath.Separator)
	} else {
		c.WriteString("persistence false\n")
	}
	fmt.Fprintf(&c, "log_dest file %s\n", logFile)
	c.WriteString("log_type error\nlog_type warning\nlog_type notice\n")
	if o.Verbose {
		c.WriteString("log_type information\n")
		c.WriteString("log_timestamp_format %H:%M:%S\n")
	}
	if root {
		// As root, mosquitto would switch to the user "mosquitto", which
		// cannot write the log in a private directory.
		c.WriteString("user root\n")
	}
	if o.Extra != "" {
		c.WriteString(o.Extra)
		if !strings.HasSuffix(o.Extra, "\n") {
			c.WriteString("\n")
		}
	}
	return c.String()
}

// Stop sends SIGTERM to the broker's PID and waits for it to exit, then
// sends SIGKILL after timeout (≤ 0: DefaultStopTimeout) and returns an
// error wrapping ErrKilled. Otherwise it returns the broker's exit
// error, nil for a clean exit. It is safe to call more than once.
func (p *Process) Stop(timeout time.Duration) error {
	timeout = defaults.Positive(timeout, DefaultStopTimeout)
	return p.Process.Stop(timeout)
}

// WaitListening waits until the broker at addr serves connections,
// exited is closed, ctx ends or StartTimeout passes.
//
// A connection the kernel accepts is not enough. mosquitto listens
// before it sets up its signal handlers and enters its main loop, and a
// SIGTERM that arrives between the two is lost (its handler clears the
// flag that the loop then sets): such a broker ran on until it was
// killed. So the broker must answer a probe, which only its main loop
// does.
func WaitListening(ctx context.Context, addr string, exited <-chan struct{}) error {
	deadline := time.Now().Add(StartTimeout)
	for {
		err := probe(ctx, addr)
		if err == nil {
			select {
			case <-exited:
				return errors.New("exited while answering the first connection")
			default:
				return nil
			}
		}
		select {
		case <-exited:
			return errors.New("exited before accepting connections")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not serving connections after %v: %w", StartTimeout, err)
		}
	}
}

// probeTimeout bounds one probe: a loaded machine can take a while to
// schedule the broker.
const probeTimeout = 2 * time.Second

// probe connects to addr, closes its side at once and waits for the
// broker to close the other. A broker reads the end of the connection
// only in its main loop, on a plain or a TLS listener alike, and logs
// no client (a connection that "closed its connection").
func probe(ctx context.Context, addr string) error {
	d := net.Dialer{Timeout: probeTimeout}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	deadline := time.Now().Add(probeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := c.SetDeadline(deadline); err != nil {
		return err
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		return err
	}
	var b [64]byte
	if _, err := c.Read(b[:]); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		// A timeout: the broker listens, but its loop has not run.
		return fmt.Errorf("no answer to a probe: %w", err)
	}
	return nil
}

// FreePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("mosquitto: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// LogTail returns the last n lines of the log of a broker started in
// dir, or why it cannot be read.
func LogTail(dir string, n int) string { return child.Tail(filepath.Join(dir, LogFile), n) }
