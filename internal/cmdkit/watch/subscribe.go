package watch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/eclipse/paho.golang/paho"
)

// Limits of a Subscriber.
const (
	// SubscribeTimeout bounds the wait for a SUBACK.
	SubscribeTimeout = 10 * time.Second
	// MaxSubscribeDrops is how many times in a row the broker may close
	// the connection before answering the SUBSCRIBE before the
	// Subscriber gives up: a broker drops a client whose filter it
	// refuses, and the client would otherwise reconnect and subscribe
	// again forever.
	MaxSubscribeDrops = 3
)

// SubscribeFunc sends a SUBSCRIBE and waits for its SUBACK: a
// connection's Subscribe method (autopaho.ConnectionManager.Subscribe).
type SubscribeFunc func(context.Context, *paho.Subscribe) (*paho.Suback, error)

// Subscriber subscribes to a watch's filters on every connection: the
// session is clean, so the broker forgets them when a connection drops.
// It tells a refusal, which ends the watch, from a connection that
// dropped for another reason, after which the next connection subscribes
// again. Up and Down are the connection's OnUp and OnDown.
type Subscriber struct {
	ctx     context.Context
	sub     *paho.Subscribe
	filters []string
	fatal   chan error

	mu      sync.Mutex
	gen     int  // connections so far
	pending bool // a SUBSCRIBE on this connection awaits its SUBACK
	drops   int  // connections in a row dropped before the SUBACK
}

// NewSubscriber returns a Subscriber to filters (at QoS 0) that works
// until ctx ends.
func NewSubscriber(ctx context.Context, filters []string) *Subscriber {
	sub := &paho.Subscribe{}
	for _, f := range filters {
		sub.Subscriptions = append(sub.Subscriptions, paho.SubscribeOptions{Topic: f})
	}
	return &Subscriber{ctx: ctx, sub: sub, filters: filters, fatal: make(chan error, 1)}
}

// Fatal receives the error that ends the watch: the broker refused a
// filter, the subscription failed, or the broker closed the connection
// MaxSubscribeDrops times in a row before answering it.
func (s *Subscriber) Fatal() <-chan error { return s.fatal }

// Up subscribes on a new connection. It returns at once (a connection's
// OnUp must not block): the SUBSCRIBE waits for its SUBACK on its own
// goroutine, at most SubscribeTimeout.
func (s *Subscriber) Up(subscribe SubscribeFunc) {
	s.mu.Lock()
	s.gen++
	gen := s.gen
	s.pending = true
	s.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(s.ctx, SubscribeTimeout)
		defer cancel()
		sa, err := subscribe(ctx, s.sub)
		s.mu.Lock()
		defer s.mu.Unlock()
		if gen != s.gen || !s.pending || s.ctx.Err() != nil {
			return // a later connection took over, or the watch ends
		}
		s.pending = false
		switch {
		case sa != nil && err != nil:
			s.fail(Refusal(s.filters, sa))
		case err != nil:
			s.fail(fmt.Errorf("watch: subscribe to %v: %w", s.filters, err))
		default:
			s.drops = 0
		}
	}()
}

// Down notes that the connection dropped; before the SUBACK, it counts
// towards MaxSubscribeDrops.
func (s *Subscriber) Down() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.pending {
		return
	}
	s.pending = false
	s.drops++
	if s.drops >= MaxSubscribeDrops {
		s.fail(fmt.Errorf("watch: the broker closed the connection %d times in a row before answering the subscription to %v: it refuses a filter, or this client", s.drops, s.filters))
	}
}

func (s *Subscriber) fail(err error) {
	select {
	case s.fatal <- err:
	default:
	}
}

// Refusal names the filters whose SUBACK reason code is a failure.
func Refusal(filters []string, sa *paho.Suback) error {
	var errs []error
	for i, code := range sa.Reasons {
		if code >= 0x80 && i < len(filters) {
			errs = append(errs, fmt.Errorf("%q: reason code 0x%02X", filters[i], code))
		}
	}
	if len(errs) == 0 {
		return errors.New("watch: the broker refused the subscription")
	}
	return fmt.Errorf("watch: the broker refused the subscription to %w", errors.Join(errs...))
}
