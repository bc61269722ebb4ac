package mosquitto

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// need returns the mosquitto binary, or skips the test when it is not
// installed and CANDEC_REQUIRE_MOSQUITTO is not 1.
func need(t *testing.T) string {
	t.Helper()
	exe, err := Find()
	if err != nil {
		if os.Getenv("CANDEC_REQUIRE_MOSQUITTO") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return exe
}

func TestParseVersion(t *testing.T) {
	tests := []struct{ help, want string }{
		{"mosquitto version 2.0.11\n\nmosquitto is an MQTT v5.0/v3.1.1/v3.1 broker.\n", "mosquitto 2.0.11"},
		{"mosquitto version 2.0.18", "mosquitto 2.0.18"},
		{"", "mosquitto (unknown version)"},
		{"Error: unknown option\n", "mosquitto (unknown version)"},
	}
	for _, tt := range tests {
		if got := parseVersion(tt.help); got != tt.want {
			t.Errorf("parseVersion(%q): got %q, want %q", tt.help, got, tt.want)
		}
	}
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name          string
		root          bool
		o             Options
		want, notWant []string
	}{
		{"plain", false, Options{},
			[]string{"listener 18831 127.0.0.1\n", "set_tcp_nodelay true\n", "allow_anonymous true\n", "persistence false\n", "log_dest file /tmp/x/mosquitto.log\n"},
			[]string{"user root", "log_type information"}},
		{"root", true, Options{}, []string{"user root\n"}, []string{"log_type information"}},
		{"verbose", false, Options{Verbose: true}, []string{"log_type information\n", "log_timestamp_format %H:%M:%S\n"}, []string{"user root"}},
		{"password", false, Options{PasswordFile: "/tmp/x/passwd"}, []string{"allow_anonymous false\n", "password_file /tmp/x/passwd\n"}, []string{"allow_anonymous true"}},
		{"tls", false, Options{CAFile: "/c/ca.pem", CertFile: "/c/s.pem", KeyFile: "/c/s.key"},
			[]string{"certfile /c/s.pem\n", "keyfile /c/s.key\n", "cafile /c/ca.pem\n", "allow_anonymous true\n"}, []string{"require_certificate", "acl_file"}},
		{"client certificate", false, Options{CAFile: "/c/ca.pem", CertFile: "/c/s.pem", KeyFile: "/c/s.key", RequireCertificate: true, IdentityAsUsername: true},
			[]string{"require_certificate true\n", "use_identity_as_username true\n", "allow_anonymous false\n"}, []string{"allow_anonymous true", "password_file"}},
		{"client certificate and password", false, Options{CAFile: "/c/ca.pem", CertFile: "/c/s.pem", KeyFile: "/c/s.key", RequireCertificate: true, PasswordFile: "/p"},
			[]string{"require_certificate true\n", "allow_anonymous false\n", "password_file /p\n"}, []string{"use_identity_as_username"}},
		{"acl", false, Options{PasswordFile: "/p", ACLFile: "/a/acl"}, []string{"acl_file /a/acl\n", "password_file /p\n"}, nil},
		{"persistence", false, Options{Dir: "/tmp/x", Persistence: true}, []string{"persistence true\n", "persistence_location /tmp/x/\n"}, []string{"persistence false"}},
		{"extra last", true, Options{Extra: "connection up\naddress 127.0.0.1:1"}, []string{"user root\nconnection up\naddress 127.0.0.1:1\n"}, nil},
	}
	for _, tt := range tests {
		c := config(18831, "/tmp/x/mosquitto.log", tt.root, tt.o)
		for _, w := range tt.want {
			if !strings.Contains(c, w) {
				t.Errorf("%s: config lacks %q:\n%s", tt.name, w, c)
			}
		}
		for _, w := range tt.notWant {
			if strings.Contains(c, w) {
				t.Errorf("%s: config has %q:\n%s", tt.name, w, c)
			}
		}
	}
}

func TestFindWithoutPATH(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	p, err := Find()
	for _, q := range []string{"/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"} {
		if fi, statErr := os.Stat(q); statErr == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			if err != nil || p != q {
				t.Errorf("Find with an empty PATH: got %q, %v; want %s", p, err, q)
			}
			return
		}
	}
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("Find with an empty PATH and no sbin binary: got %q, %v; want ErrNotFound", p, err)
	}
}

func TestStartMissingBinary(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-mosquitto")
	p, err := Start(context.Background(), Options{Binary: missing, Dir: t.TempDir()})
	if p != nil {
		p.Stop(0)
	}
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Start with a missing binary: got %v, want ErrNotFound", err)
	}
	for _, want := range []string{"Debian package mosquitto", missing} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestStartFailureShowsTheLog(t *testing.T) {
	// A "mosquitto" that logs and exits at once, as one does on a bad
	// configuration.
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "mosquitto")
	script := "#!" + sh + "\necho 'Error: something is wrong' >> " + filepath.Join(dir, LogFile) + "\nexit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	_, err = Start(context.Background(), Options{Binary: fake, Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "exited before accepting connections") || !strings.Contains(err.Error(), "Error: something is wrong") {
		t.Errorf("Start of a failing broker: got %v, want an error saying it exited, with its log", err)
	}
}

func TestVersion(t *testing.T) {
	exe := need(t)
	if v := Version(exe); !strings.HasPrefix(v, "mosquitto 2") && !strings.HasPrefix(v, "mosquitto 1") {
		t.Errorf("Version(%s): got %q, want mosquitto N.N.N", exe, v)
	}
}

// TestStartStopRestart starts a broker, stops it by PID, and starts it
// again on the same port, as brokertest's Restart does.
func TestStartStopRestart(t *testing.T) {
	exe := need(t)
	ctx := context.Background()
	dir := t.TempDir()
	p, err := Start(ctx, Options{Binary: exe, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(0)
	if p.URL != "mqtt://"+p.Addr || !strings.HasPrefix(p.Addr, "127.0.0.1:") {
		t.Errorf("got Addr %q URL %q, want 127.0.0.1:port and mqtt://127.0.0.1:port", p.Addr, p.URL)
	}
	if p.PID() <= 0 {
		t.Errorf("PID: got %d, want > 0", p.PID())
	}
	dial(t, p.Addr, true)
	if err := p.Stop(0); err != nil {
		t.Errorf("Stop: got %v, want a clean exit", err)
	}
	if err := p.Stop(0); err != nil {
		t.Errorf("second Stop: got %v, want nil", err)
	}
	select {
	case <-p.Exited():
	default:
		t.Error("Exited not closed after Stop")
	}
	dial(t, p.Addr, false)

	_, port, _ := net.SplitHostPort(p.Addr)
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	q, err := Start(ctx, Options{Binary: exe, Dir: dir, Port: n, Verbose: true})
	if err != nil {
		t.Fatalf("restart on port %d: %v", n, err)
	}
	defer q.Stop(0)
	if q.Addr != p.Addr {
		t.Errorf("restart: got %s, want %s", q.Addr, p.Addr)
	}
	dial(t, q.Addr, true)
	wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := q.Wait(wctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait on a running broker: got %v, want the context's deadline", err)
	}
	if err := q.Stop(0); err != nil {
		t.Errorf("Stop after restart: got %v, want a clean exit", err)
	}
	if err := q.Wait(ctx); err != nil {
		t.Errorf("Wait after Stop: got %v, want nil", err)
	}
	if !strings.Contains(LogTail(dir, 40), "New client connected") && !strings.Contains(LogTail(dir, 40), "New connection") {
		t.Errorf("verbose log lacks the connection notice:\n%s", LogTail(dir, 40))
	}
}

func TestStopKillsStubbornBroker(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip(err)
	}
	// A "mosquitto" that ignores SIGTERM and serves (via the test) so
	// Start sees it ready.
	l := serve(t)
	port := l.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	fake := filepath.Join(dir, "mosquitto")
	started := filepath.Join(dir, "started")
	if err := os.WriteFile(fake, []byte("#!"+sh+"\ntrap '' TERM\ntouch "+started+"\nexec sleep 30\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	p, err := Start(context.Background(), Options{Binary: fake, Dir: dir, Port: port})
	if err != nil {
		t.Fatal(err)
	}
	for { // wait until the shell has set its trap
		if _, err := os.Stat(started); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	err = p.Stop(200 * time.Millisecond)
	if !errors.Is(err, ErrKilled) {
		t.Errorf("Stop of a broker ignoring SIGTERM: got %v, want ErrKilled", err)
	}
}

// dial checks whether addr accepts connections.
func dial(t *testing.T, addr string, want bool) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err == nil {
		c.Close()
	}
	if got := err == nil; got != want {
		t.Errorf("dial %s: got accepting=%v (%v), want %v", addr, got, err, want)
	}
}

// serve listens on a port of 127.0.0.1 and closes each connection as
// mosquitto's loop does when a client closes its side first (the
// probe of WaitListening). It stops at the end of the test.
func serve(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	t.Cleanup(func() { l.Close(); <-done })
	return l
}

// TestWaitListeningWantsAnAnswer: a port that accepts connections
// (the kernel's backlog) but whose process never reads them is not a
// broker ready to serve, and a SIGTERM sent to mosquitto then could be
// lost; one that answers, by closing the connection, is.
func TestWaitListeningWantsAnAnswer(t *testing.T) {
	mute, err := net.Listen("tcp", "127.0.0.1:0") // listens, never accepts
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := WaitListening(ctx, mute.Addr().String(), nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a port nobody serves: got %v, want the context's deadline", err)
	}

	l := serve(t)
	if err := WaitListening(context.Background(), l.Addr().String(), nil); err != nil {
		t.Errorf("a port that answers: got %v, want nil", err)
	}
}
