package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/yukart/candec/campaign"
	"github.com/yukart/candec/internal/fleet/mqtt311"
	"github.com/yukart/candec/internal/fleet/rollout"
	"github.com/yukart/candec/mqttclient"
)

// car is one car's connection to the broker.
type car struct {
	c     *Car
	conn  *mqtt311.Client
	topic string
	late  time.Duration // the most a publish came after its window's end
	// redial, when not nil, connects again after the connection was
	// lost, as a bridge does; nil: a lost connection ends the run.
	redial redialFunc
	h      mqtt311.Handler // the connection's messages: the policy topic's
	sent   int             // the windows published so far, in order
	// Resent counts the windows sent again after a reconnection.
	resent int
	camp   *carCampaign // nil: a run without a campaign
}

// redialFunc connects a car again after its connection was lost
// (attempt counts from 1), its messages to h.
type redialFunc func(ctx context.Context, attempt int, h mqtt311.Handler) (*mqtt311.Client, error)

// policyTopic is where a car takes campaigns: rollout's default, which
// `candec campaign push` publishes on.
const policyTopic = rollout.DefaultPolicyTopic

// dialCar connects a car; with a campaign the car subscribes to its
// policy topic, before it publishes anything (mqtt311's packet IDs).
func dialCar(ctx context.Context, s mqttclient.Settings, c *Car, redial redialFunc, cc *Campaign) (*car, error) {
	cr := &car{c: c, topic: "fleet/" + c.ID + "/yukart/window", redial: redial, h: func(_, _ []byte, _ int64) {}}
	if cc != nil {
		cr.camp = &carCampaign{key: cc.Key, dbc: cc.DBC, in: make(chan taken, 1)}
		cr.h = cr.take
	}
	conn, err := mqtt311.Dial(ctx, s, cr.h)
	// Where the car can connect again (NATS), a first connection refused
	// or closed is tried again as a bridge would: the account's first
	// MQTT clients have the node make MQTT's own streams, which can
	// outlast its patience on a loaded machine.
	for attempt := 1; err != nil && redial != nil && attempt <= 50; attempt++ {
		if serr := sleepUntil(ctx, time.Now().Add(200*time.Millisecond)); serr != nil {
			return nil, serr
		}
		conn, err = redial(ctx, attempt, cr.h)
	}
	if err != nil {
		return nil, fmt.Errorf("fleet: car %s: %w", c.ID, err)
	}
	cr.conn = conn
	if err := cr.subscribe(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return cr, nil
}

// subscribe subscribes a car of a run with a campaign to its policy
// topic (a campaign pushed while it was away is retained).
func (c *car) subscribe(ctx context.Context) error {
	if c.camp == nil {
		return nil
	}
	if err := c.conn.Subscribe(ctx, campaign.Topic(policyTopic, c.c.ID)); err != nil {
		return fmt.Errorf("fleet: car %s: %w", c.c.ID, err)
	}
	return nil
}

// drive publishes each window when it is due; a live car then makes
// the rest of its drive as it goes.
func (c *car) drive(ctx context.Context, start time.Time) error {
	if err := c.send(ctx, start, 0); err != nil {
		return err
	}
	if c.c.live == nil {
		return nil
	}
	return c.driveLive(ctx, start)
}

// send publishes the car's windows from the i-th on, each when it is
// due.
func (c *car) send(ctx context.Context, start time.Time, i int) error {
	for ; i < len(c.c.Windows); i++ {
		w := &c.c.Windows[i]
		if err := sleepUntil(ctx, start.Add(w.At)); err != nil {
			return err
		}
		if err := c.publish(ctx, i); err != nil {
			return err
		}
		if late := time.Since(start.Add(w.At)); late > c.late {
			c.late = late
		}
	}
	return nil
}

// driveLive runs the car's engine up to each window's end as it comes,
// and applies a campaign the car took at once, at the drive's time then.
func (c *car) driveLive(ctx context.Context, start time.Time) error {
	d := c.c.live
	end := d.frames.end
	var in chan taken
	if c.camp != nil {
		in = c.camp.in
	}
	tm := time.NewTimer(0)
	defer tm.Stop()
	for !d.done() {
		next := min((d.eng.Now()/d.period+1)*d.period, end)
		tm.Reset(time.Until(start.Add(time.Duration(next - c.c.Start))))
		select {
		case <-tm.C:
			if next >= end {
				d.finish()
			} else {
				d.runTo(next)
			}
		case t := <-in:
			c.apply(t, min(time.Since(start), time.Duration(end-c.c.Start)))
		case <-ctx.Done():
			return ctx.Err()
		}
		sent := len(c.c.Windows)
		c.c.Windows = d.windows
		if err := c.send(ctx, start, sent); err != nil {
			return err
		}
	}
	return nil
}

// publish publishes window i; where the connection was lost, it
// connects again and first sends again what was not acknowledged.
func (c *car) publish(ctx context.Context, i int) error {
	w := &c.c.Windows[i]
	err := c.conn.Publish1(c.topic, w.Payload)
	if err == nil {
		c.sent = i + 1
		return nil
	}
	if c.redial == nil {
		return fmt.Errorf("fleet: car %s: window %d: %w", c.c.ID, w.Seq, err)
	}
	if err := c.reconnect(ctx); err != nil {
		return err
	}
	return c.publish(ctx, i)
}

// resendIfGone reconnects and sends again what is unacknowledged when
// the connection was lost after the last publish.
func (c *car) resendIfGone(ctx context.Context) error {
	select {
	case <-c.conn.Done():
		if c.redial == nil {
			return fmt.Errorf("fleet: car %s: connection lost with %d publishes unacknowledged: %v", c.c.ID, c.waiting(), c.conn.Err())
		}
		return c.reconnect(ctx)
	default:
		return nil
	}
}

// reconnect connects again (every 100 ms, for at most a minute) and
// sends again the windows the lost connection had not had acknowledged:
// the server acknowledges in order, so they are the last ones sent.
func (c *car) reconnect(ctx context.Context) error {
	waiting, _ := c.conn.Unacked()
	_ = c.conn.Close()
	var err error
	deadline := time.Now().Add(time.Minute)
	for attempt := 1; ; attempt++ {
		var conn *mqtt311.Client
		if conn, err = c.redial(ctx, attempt, c.h); err == nil {
			c.conn = conn // a failed dial leaves the closed one: close() stays safe
			if err = c.subscribe(ctx); err == nil {
				break
			}
			_ = conn.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("fleet: car %s: reconnect: %w", c.c.ID, err)
		}
		if err := sleepUntil(ctx, time.Now().Add(100*time.Millisecond)); err != nil {
			return err
		}
	}
	for j := c.sent - waiting; j < c.sent; j++ {
		if err := c.conn.Publish1(c.topic, c.c.Windows[j].Payload); err != nil {
			return c.reconnect(ctx)
		}
		c.resent++
	}
	return nil
}

func (c *car) waiting() int {
	n, _ := c.conn.Unacked()
	return n
}

func (c *car) close() { _ = c.conn.Close() }
