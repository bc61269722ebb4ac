package benchmarks

import (
	"context"
	"fmt"
	"time"

	"github.com/yukart/candec/internal/fleet/mqtt311"
	"github.com/yukart/candec/mqttclient"
)

// connectTimeout bounds a bench client's connection and subscription.
const connectTimeout = 10 * time.Second

// client is one MQTT connection of the bench: a subscriber, the status
// watcher or the checker that reads retained envelopes at the end. It
// uses package mqtt311, whose cost per message is small enough not to
// take CPU from the broker being measured.
type client struct {
	name string
	c    *mqtt311.Client
}

// connect opens a connection as id to the broker of conn whose messages
// go to on, called with the arrival time in ns since the Unix epoch from
// the client's reading goroutine.
func connect(ctx context.Context, conn mqttclient.Settings, id string, on mqtt311.Handler) (*client, error) {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	conn.ClientID = id
	c, err := mqtt311.Dial(ctx, conn, on)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: connect to %s: %w", id, conn.Broker, err)
	}
	return &client{name: id, c: c}, nil
}

// subscribe subscribes to filters at QoS 0 and checks that the broker
// granted them.
func (c *client) subscribe(ctx context.Context, filters ...string) error {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	if err := c.c.Subscribe(ctx, filters...); err != nil {
		return fmt.Errorf("bench: %s: subscribe %v: %w", c.name, filters, err)
	}
	return nil
}

// lost returns why the connection ended before close, or nil.
func (c *client) lost() error {
	select {
	case <-c.c.Done():
		return c.c.Err()
	default:
		return nil
	}
}

// close disconnects.
func (c *client) close() { _ = c.c.Close() }
