package broker

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"
)

// Broker is a running embedded MQTT broker.
type Broker struct {
	srv  *mqtt.Server
	addr string

	closeOnce sync.Once
	stop      chan struct{} // closed by Close; ends the context watcher
	watcher   sync.WaitGroup
}

// Start starts a broker listening on addr ("127.0.0.1:0" picks a free
// port; see Addr). The broker runs until Close is called or ctx ends.
func Start(ctx context.Context, addr string) (*Broker, error) {
	// Bind first, so that a busy port is an error here rather than a log
	// line from a goroutine, and Addr knows the port the kernel chose.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("broker: listen on %s: %w", addr, err)
	}
	srv := mqtt.New(&mqtt.Options{
		// Mochi logs every client that goes away as a warning; the
		// embedded broker's users care only about errors they get back.
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err := srv.AddHook(new(allowAll), nil); err != nil {
		ln.Close()
		return nil, fmt.Errorf("broker: %w", err)
	}
	if err := srv.AddListener(netListener{listeners.NewNet("tcp", ln), srv}); err != nil {
		ln.Close()
		return nil, fmt.Errorf("broker: %w", err)
	}
	if err := srv.Serve(); err != nil {
		ln.Close()
		return nil, fmt.Errorf("broker: serve: %w", err)
	}
	b := &Broker{srv: srv, addr: ln.Addr().String(), stop: make(chan struct{})}
	b.watcher.Add(1)
	go func() {
		defer b.watcher.Done()
		select {
		case <-ctx.Done():
			b.shutdown()
		case <-b.stop:
		}
	}()
	return b, nil
}

// Addr returns the host:port the broker listens on.
func (b *Broker) Addr() string { return b.addr }

// URL returns the broker's address as an mqtt:// URL.
func (b *Broker) URL() string { return "mqtt://" + b.addr }

// Close disconnects every client, stops listening and waits until the
// broker's goroutines have ended. It is safe to call more than once.
func (b *Broker) Close() error {
	b.shutdown()
	b.watcher.Wait()
	return nil
}

func (b *Broker) shutdown() {
	b.closeOnce.Do(func() {
		close(b.stop)
		// Server.Close closes the listener, disconnects the clients and
		// waits for their goroutines.
		_ = b.srv.Close()
	})
}

// allowAll lets every client connect and use every topic: the embedded
// broker listens on a local port for a demo or a test.
type allowAll struct {
	mqtt.HookBase
}

func (h *allowAll) ID() string { return "allow-all" }

func (h *allowAll) Provides(b byte) bool {
	return bytes.IndexByte([]byte{mqtt.OnConnectAuthenticate, mqtt.OnACLCheck}, b) >= 0
}

func (h *allowAll) OnConnectAuthenticate(*mqtt.Client, packets.Packet) bool { return true }

func (h *allowAll) OnACLCheck(*mqtt.Client, string, bool) bool { return true }

// netListener is mochi's TCP listener, closed without mochi's
// Clients.GetByListener: that takes the clients' read lock twice, and
// deadlocks when a client's connection ends in between (a writer then
// waits between the two). GetAll takes it once.
type netListener struct {
	*listeners.Net
	srv *mqtt.Server
}

// Close closes the listener and disconnects its clients.
func (l netListener) Close(listeners.CloseFn) {
	l.Net.Close(func(id string) {
		for _, cl := range l.srv.Clients.GetAll() {
			if cl.Net.Listener == id && !cl.Closed() {
				_ = l.srv.DisconnectClient(cl, packets.ErrServerShuttingDown)
			}
		}
	})
}
