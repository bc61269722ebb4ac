package stack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ErrNoMosquitto: the mosquitto binary is not installed.
var ErrNoMosquitto = errors.New("stack: mosquitto not found on PATH, in /usr/sbin or /usr/local/sbin; install the Debian package mosquitto (apt-get install mosquitto), or pass --broker URL")

// StartTimeout bounds how long the broker may take to accept
// connections.
const StartTimeout = 10 * time.Second

// FindMosquitto returns the path of the mosquitto binary: from PATH, or
// /usr/sbin or /usr/local/sbin (Debian installs it in sbin, which a
// user's PATH often lacks).
func FindMosquitto() (string, error) {
	if p, err := exec.LookPath("mosquitto"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", ErrNoMosquitto
}

// MosquittoVersion returns "mosquitto 2.0.11" from the first line of
// `mosquitto -h`, or "mosquitto (unknown version)".
func MosquittoVersion(exe string) string {
	out, _ := exec.Command(exe, "-h").CombinedOutput() // exits 3 after printing help
	return parseVersion(string(out))
}

func parseVersion(help string) string {
	first, _, _ := strings.Cut(help, "\n")
	if v, ok := strings.CutPrefix(strings.TrimSpace(first), "mosquitto version "); ok && v != "" {
		return "mosquitto " + v
	}
	return "mosquitto (unknown version)"
}

// Mosquitto is a private broker.
type Mosquitto struct {
	*Process
	// Addr is host:port; URL mqtt://host:port.
	Addr, URL string
	// Version is the broker's version line.
	Version string
}

// MosquittoConfig returns the configuration of a private broker on port
// that logs to logFile: localhost only, anonymous, TCP_NODELAY (without
// it Nagle's algorithm adds a 40 ms tail), no persistence.
func MosquittoConfig(port int, logFile string, root bool) string {
	var c strings.Builder
	fmt.Fprintf(&c, "listener %d 127.0.0.1\n", port)
	c.WriteString("allow_anonymous true\n")
	c.WriteString("set_tcp_nodelay true\n")
	c.WriteString("persistence false\n")
	fmt.Fprintf(&c, "log_dest file %s\n", logFile)
	c.WriteString("log_type error\nlog_type warning\nlog_type notice\n")
	if root {
		// As root, mosquitto would switch to the user "mosquitto", which
		// cannot write the log in the bench's directory.
		c.WriteString("user root\n")
	}
	return c.String()
}

// StartMosquitto starts a private mosquitto in dir on a free port of
// 127.0.0.1 and waits until it accepts connections.
func StartMosquitto(ctx context.Context, dir string) (*Mosquitto, error) {
	exe, err := FindMosquitto()
	if err != nil {
		return nil, err
	}
	version := MosquittoVersion(exe)
	// A free port can be taken between the probe and mosquitto's bind:
	// try a few.
	for range 5 {
		port, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("stack: %w", err)
		}
		conf := filepath.Join(dir, "mosquitto.conf")
		log := filepath.Join(dir, "mosquitto.log")
		if err := os.WriteFile(conf, []byte(MosquittoConfig(port, log, os.Geteuid() == 0)), 0o600); err != nil {
			return nil, fmt.Errorf("stack: %w", err)
		}
		p, err := StartProcess("broker", Options{Dir: dir}, exe, "-c", conf)
		if err != nil {
			return nil, err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if err = WaitListening(ctx, addr, p.Exited()); err == nil {
			return &Mosquitto{Process: p, Addr: addr, URL: "mqtt://" + addr, Version: version}, nil
		}
		_ = p.Stop(time.Second)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		err = fmt.Errorf("stack: mosquitto on %s: %w\n%s", addr, err, Tail(log, 10))
		if _, statErr := os.Stat(log); statErr != nil {
			continue
		}
		if !strings.Contains(Tail(log, 10), "Address already in use") {
			return nil, err
		}
	}
	return nil, errors.New("stack: mosquitto could not bind a free port in 5 tries")
}

// WaitListening waits until addr accepts a TCP connection, exited is
// closed, ctx ends or StartTimeout passes.
func WaitListening(ctx context.Context, addr string, exited <-chan struct{}) error {
	deadline := time.Now().Add(StartTimeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
			return errors.New("exited before accepting connections")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not accepting connections after %v: %w", StartTimeout, err)
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
