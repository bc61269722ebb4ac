package brokertest

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yukart/candec/internal/lab/mosquitto"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMosquittoRetainsAndRestarts(t *testing.T) {
	if _, err := mosquitto.Find(); err != nil || os.Getenv(EmbeddedEnv) == "1" {
		t.Skip("mosquitto not installed or not wanted; the fallback is tested by TestFallbackToEmbedded")
	}
	b := Start(t)
	if b.Embedded {
		t.Fatal("got the embedded broker although mosquitto is installed")
	}
	conf, err := os.ReadFile(b.dir + "/mosquitto.conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"set_tcp_nodelay true", "persistence false", "listener " + b.Addr[strings.LastIndexByte(b.Addr, ':')+1:] + " 127.0.0.1"} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("config lacks %q:\n%s", want, conf)
		}
	}
	exercise(t, b)
}

func TestFallbackToEmbedded(t *testing.T) {
	t.Setenv(RequireEnv, "")
	t.Setenv(EmbeddedEnv, "")
	findMosquitto = func() (string, error) { return "", mosquitto.ErrNotFound }
	defer func() { findMosquitto = mosquitto.Find }()
	b := Start(t)
	if !b.Embedded {
		t.Fatal("got mosquitto; want the embedded broker when mosquitto is missing")
	}
	exercise(t, b)
}

// exercise checks what the service tests rely on: retained messages with
// their content type, and a Stop/Restart on the same port that drops
// clients and forgets retained messages.
func exercise(t *testing.T, b *Broker) {
	pub := Connect(t, b.URL)
	pub.PublishRetained(t, "t/x", []byte("1"), "text/plain")
	sub := Connect(t, b.URL)
	sub.Subscribe("t/#")
	// The first message is the retained one. The embedded broker (mochi)
	// acknowledges a QoS 1 publish before it hands it to the subscribers,
	// so a subscription made in between also gets the live copy: a
	// second message here is no failure.
	got := sub.WaitFor("retained t/x", func(m []Message) bool { return len(m) >= 1 })[0]
	if string(got.Payload) != "1" || !got.Retain || got.ContentType != "text/plain" {
		t.Fatalf("got %q retain=%v content type %q; want \"1\" retained text/plain", got.Payload, got.Retain, got.ContentType)
	}

	addr := b.Addr
	b.Stop()
	waitLost(t, sub)
	b.Restart()
	if b.Addr != addr {
		t.Fatalf("restart moved the broker from %s to %s", addr, b.Addr)
	}
	sub2 := Connect(t, b.URL)
	sub2.Subscribe("t/#")
	pub2 := Connect(t, b.URL)
	pub2.PublishQoS1("t/y", []byte("2"), false)
	msgs := sub2.WaitFor("t/y after restart", func(m []Message) bool { return len(m) > 0 })
	if msgs[0].Topic != "t/y" {
		t.Fatalf("first message after restart on %s; want t/y (retained t/x must be gone without persistence)", msgs[0].Topic)
	}
}

func waitLost(t *testing.T, c *Client) {
	t.Helper()
	// The paho client notices the closed connection from its read loop.
	done := make(chan struct{})
	go func() {
		<-c.cli.Done()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(StartTimeout):
		t.Fatal("client still connected after the broker stopped")
	}
}

// fakeTB records a fatal failure and ends the goroutine, as testing.T does.
type fakeTB struct {
	testing.TB
	mu     sync.Mutex
	failed string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.failed = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

func TestRequireMosquitto(t *testing.T) {
	t.Setenv(RequireEnv, "1")
	t.Setenv(EmbeddedEnv, "")
	findMosquitto = func() (string, error) { return "", mosquitto.ErrNotFound }
	defer func() { findMosquitto = mosquitto.Find }()
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(f)
	}()
	<-done
	if !strings.Contains(f.failed, "mosquitto not found") || !strings.Contains(f.failed, RequireEnv+"=1") {
		t.Fatalf("got failure %q; want one saying mosquitto is missing and %s=1", f.failed, RequireEnv)
	}
}
