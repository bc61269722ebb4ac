package mqttclient

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
)

// Attempts keeps a connection's failed attempts, so that a command
// waiting for its first connection can say why there is none: give
// Record as Config.OnConnectError, then call Await.
type Attempts struct {
	last    atomic.Value // error
	refused chan struct{}
	once    sync.Once
}

// NewAttempts returns an empty record of attempts.
func NewAttempts() *Attempts { return &Attempts{refused: make(chan struct{})} }

// Record notes a failed attempt; it is Config.OnConnectError.
func (a *Attempts) Record(err error) {
	a.last.Store(err)
	if Final(err) != nil {
		a.once.Do(func() { close(a.refused) })
	}
}

// Await waits until cm, a connection to url, is up, at most timeout. Its
// error names the URL and says why not: at once, an attempt that would
// fail the same way again (Final: the broker's refusal of the client, a
// wrong password, a certificate either side refuses); after timeout,
// the last attempt's error.
func (a *Attempts) Await(ctx context.Context, cm *autopaho.ConnectionManager, url string, timeout time.Duration) error {
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	go func() {
		select {
		case <-a.refused:
			cancel()
		case <-actx.Done():
		}
	}()
	err := cm.AwaitConnection(actx)
	if err == nil {
		return nil
	}
	last, _ := a.last.Load().(error)
	if r, ok := Refusal(last).(*refusedError); ok {
		return &refusedError{why: url + " refused the connection: " + r.why, url: true}
	}
	if Final(last) != nil {
		if inner := errors.Unwrap(last); inner != nil {
			last = inner
		}
		return fmt.Errorf("no connection to %s: %w", url, last)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("stopped before %s accepted the connection", url)
	}
	if last != nil {
		// autopaho's "failed to connect to URL: …" would name the URL twice.
		if inner := errors.Unwrap(last); inner != nil {
			last = inner
		}
		return fmt.Errorf("no connection to %s within %v: %w", url, timeout, last)
	}
	return fmt.Errorf("no connection to %s within %v", url, timeout)
}
