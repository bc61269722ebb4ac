package mqttclient

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/autopaho"

	"github.com/yukart/candec/internal/testkit/brokertest"
)

// stalled waits until the publisher's flush has been under way for a
// second while the proxy holds unread bytes: the broker's side stopped
// reading and the write is blocked on full socket buffers.
func stalled(t *testing.T, proxy *brokertest.Proxy, flushing *atomic.Int64, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		since := flushing.Load()
		if since != 0 && time.Since(time.Unix(0, since)) > time.Second && proxy.Backlog() != 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the publisher's write did not block within %v (backlog %d bytes)", within, proxy.Backlog())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDisconnectBrokerNotReading: a broker that is connected but stops
// reading (a proxy in front of mosquitto stops copying what the client
// sends) cannot hold the client: with a batched write blocked on the
// full socket buffers, Disconnect still returns within
// DisconnectTimeout (before, paho's DISCONNECT waited for the
// connection's lock for ever, behind the blocked write), the blocked
// write fails, and the connection manager is done.
func TestDisconnectBrokerNotReading(t *testing.T) {
	b := brokertest.Start(t)
	proxy := brokertest.StartProxy(t, b.Addr)
	const disconnectTimeout = 500 * time.Millisecond
	var batch Batcher
	at := NewAttempts()
	cm, err := Connect(context.Background(), Config{Settings: Settings{Broker: proxy.URL, ClientID: "stalled"},
		Batcher: &batch, DisconnectTimeout: disconnectTimeout, OnConnectError: at.Record})
	if err != nil {
		t.Fatal(err)
	}
	if err := at.Await(context.Background(), cm, proxy.URL, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	proxy.StopReading()
	var flushing atomic.Int64 // when the flush under way began; 0: none
	flushErr := make(chan error, 1)
	go func() {
		payload := bytes.Repeat([]byte{'x'}, 16<<10)
		for {
			batch.Hold()
			err := batch.Publish("stall/t", payload, false, "")
			flushing.Store(time.Now().UnixNano())
			if ferr := batch.Flush(); err == nil {
				err = ferr
			}
			flushing.Store(0)
			if err != nil {
				flushErr <- err
				return
			}
		}
	}()
	stalled(t, proxy, &flushing, 30*time.Second)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cm.Disconnect(ctx); err != nil {
		t.Fatalf("Disconnect: %v after %v, want it done", err, time.Since(start))
	}
	took := time.Since(start)
	// The bound is DisconnectTimeout; the margin is for a busy machine.
	if limit := disconnectTimeout + 3*time.Second; took > limit {
		t.Errorf("Disconnect took %v with the broker not reading, want at most %v", took, limit)
	}
	select {
	case err := <-flushErr:
		if err == nil || errors.Is(err, context.Canceled) {
			t.Errorf("the blocked write returned %v, want the closed socket's error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the blocked write did not return once the socket was closed")
	}
	t.Logf("Disconnect took %v; the write failed", took)
}

// TestWriteTimeoutBrokerNotReading: with Config.WriteTimeout, a write
// the broker does not take (it stopped reading, the socket buffers are
// full) fails within the timeout, with no Disconnect, and the
// connection goes down.
func TestWriteTimeoutBrokerNotReading(t *testing.T) {
	b := brokertest.Start(t)
	proxy := brokertest.StartProxy(t, b.Addr)
	const writeTimeout = 300 * time.Millisecond
	var batch Batcher
	at := NewAttempts()
	down := make(chan struct{}, 1)
	cm, err := Connect(context.Background(), Config{Settings: Settings{Broker: proxy.URL, ClientID: "stalled-write"},
		Batcher: &batch, WriteTimeout: writeTimeout, OnConnectError: at.Record,
		OnDown: func() {
			select {
			case down <- struct{}{}:
			default:
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = cm.Disconnect(ctx)
	}()
	if err := at.Await(context.Background(), cm, proxy.URL, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	proxy.StopReading()
	payload := bytes.Repeat([]byte{'x'}, 16<<10)
	var took time.Duration
	for i := 0; ; i++ {
		if i > 100_000 {
			t.Fatal("every write went through: the proxy reads")
		}
		batch.Hold()
		err := batch.Publish("stall/t", payload, false, "")
		start := time.Now()
		if ferr := batch.Flush(); err == nil {
			err = ferr
		}
		if err != nil {
			took = time.Since(start)
			if errors.Is(err, autopaho.ConnectionDownError) {
				t.Fatalf("the connection went down before a write failed")
			}
			break
		}
	}
	if limit := writeTimeout + 3*time.Second; took > limit {
		t.Errorf("the blocked write failed after %v, want at most %v", took, limit)
	}
	select {
	case <-down:
	case <-time.After(10 * time.Second):
		t.Fatal("the connection did not go down after the failed write")
	}
}
