package testkit

import (
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// TestSilentListener: a client connects and its read gets nothing
// (a timeout, not EOF) while the test runs; accepted is closed.
func TestSilentListener(t *testing.T) {
	addr, accepted := SilentListener(t)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	<-accepted
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	n, err := c.Read(make([]byte, 1))
	if ne, ok := err.(net.Error); n != 0 || !ok || !ne.Timeout() {
		t.Errorf("read %d bytes, %v; want nothing until the deadline", n, err)
	}
}

// TestSyncBuffer: what is written is read back.
func TestSyncBuffer(t *testing.T) {
	var b SyncBuffer
	b.Write([]byte("a"))
	b.Write([]byte("b"))
	if got := b.String(); got != "ab" {
		t.Errorf("got %q, want ab", got)
	}
}

// TestUnreachableURL: nothing accepts a connection at the URL, and
// WriteFile's file holds its text.
func TestUnreachableURL(t *testing.T) {
	u := UnreachableURL(t)
	addr, ok := strings.CutPrefix(u, "mqtt://")
	if !ok {
		t.Fatalf("got %q, want an mqtt:// URL", u)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("%s accepted a connection", u)
	}
	p := WriteFile(t, t.TempDir(), "f.txt", "text")
	if b, err := os.ReadFile(p); err != nil || string(b) != "text" {
		t.Errorf("WriteFile: read back %q, %v", b, err)
	}
}
