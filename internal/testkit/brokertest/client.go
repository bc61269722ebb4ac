package brokertest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
)

// WaitTimeout is how long Client.WaitFor waits by default.
const WaitTimeout = 15 * time.Second

// Message is one message a Client received.
type Message struct {
	Topic   string
	Payload []byte
	// Retain is set when the broker sent a retained message on
	// subscription (MQTT v5 keeps the flag only for those unless the
	// subscription asks for retain-as-published, which Client does).
	Retain      bool
	QoS         byte
	ContentType string
	// Received is the local time of arrival.
	Received time.Time
}

// Client is an MQTT v5 client for tests. It records every message it
// receives, in order, and disconnects when the test ends.
type Client struct {
	t   testing.TB
	cli *paho.Client

	mu      sync.Mutex
	msgs    []Message
	changed chan struct{} // closed and replaced on every message
	lost    atomic.Bool   // the connection dropped
	closed  sync.Once
}

var clientSeq atomic.Uint64

// Connect connects a new client to the broker at rawURL (mqtt://host:port)
// with a clean session, or fails the test.
func Connect(t testing.TB, rawURL string) *Client {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatalf("brokertest: broker URL: %v", err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatalf("brokertest: connect to %s: %v", u.Host, err)
	}
	c := &Client{t: t, changed: make(chan struct{})}
	id := fmt.Sprintf("brokertest-%d-%d", time.Now().UnixNano()%1e9, clientSeq.Add(1))
	c.cli = paho.NewClient(paho.ClientConfig{
		ClientID: id,
		Conn:     conn,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){
			func(pr paho.PublishReceived) (bool, error) {
				c.record(pr.Packet)
				return true, nil
			},
		},
		OnClientError:      func(error) { c.lost.Store(true) },
		OnServerDisconnect: func(*paho.Disconnect) { c.lost.Store(true) },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ca, err := c.cli.Connect(ctx, &paho.Connect{ClientID: id, CleanStart: true, KeepAlive: 30})
	if err != nil {
		t.Fatalf("brokertest: MQTT connect to %s: %v", u.Host, err)
	}
	if ca.ReasonCode != 0 {
		t.Fatalf("brokertest: MQTT connect to %s refused: reason %d", u.Host, ca.ReasonCode)
	}
	t.Cleanup(c.Close)
	return c
}

// Close disconnects the client. It is safe to call more than once.
func (c *Client) Close() {
	c.closed.Do(func() {
		if !c.lost.Load() {
			_ = c.cli.Disconnect(&paho.Disconnect{ReasonCode: 0})
		}
		<-c.cli.Done()
	})
}

// Subscribe subscribes to topic filters at QoS 1 with retain-as-published,
// so a retained message keeps its flag even when delivered live.
func (c *Client) Subscribe(filters ...string) {
	c.t.Helper()
	s := &paho.Subscribe{}
	for _, f := range filters {
		s.Subscriptions = append(s.Subscriptions, paho.SubscribeOptions{Topic: f, QoS: 1, RetainAsPublished: true})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sa, err := c.cli.Subscribe(ctx, s)
	if err != nil {
		c.t.Fatalf("brokertest: subscribe %v: %v", filters, err)
	}
	for i, r := range sa.Reasons {
		if r >= 0x80 {
			c.t.Fatalf("brokertest: subscribe %s refused: reason %d", filters[i], r)
		}
	}
}

// Publish publishes a message at QoS 0, or fails the test.
func (c *Client) Publish(topic string, payload []byte, retain bool) {
	c.t.Helper()
	if err := c.TryPublish(topic, payload, retain); err != nil {
		c.t.Fatalf("brokertest: publish to %s: %v", topic, err)
	}
}

// TryPublish publishes a message at QoS 0 and returns the error, for
// tests that publish while the broker may be down.
func (c *Client) TryPublish(topic string, payload []byte, retain bool) error {
	_, err := c.cli.Publish(context.Background(), &paho.Publish{Topic: topic, Payload: payload, Retain: retain})
	return err
}

// PublishQoS1 publishes a message at QoS 1 and waits for the broker's
// acknowledgement, so that what follows on another connection sees it.
func (c *Client) PublishQoS1(topic string, payload []byte, retain bool) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.cli.Publish(ctx, &paho.Publish{Topic: topic, Payload: payload, Retain: retain, QoS: 1}); err != nil {
		c.t.Fatalf("brokertest: publish to %s: %v", topic, err)
	}
}

func (c *Client) record(p *paho.Publish) {
	m := Message{Topic: p.Topic, Payload: p.Payload, Retain: p.Retain, QoS: p.QoS, Received: time.Now()}
	if p.Properties != nil {
		m.ContentType = p.Properties.ContentType
	}
	c.mu.Lock()
	c.msgs = append(c.msgs, m)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// Messages returns the messages received so far, oldest first.
func (c *Client) Messages() []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Message(nil), c.msgs...)
}

// Len returns the number of messages received so far.
func (c *Client) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.msgs)
}

// WaitFor waits until cond holds for the messages received so far and
// returns them. It fails the test, naming what, when WaitTimeout passes
// first. cond is called again after every message.
func (c *Client) WaitFor(what string, cond func([]Message) bool) []Message {
	c.t.Helper()
	return c.WaitForWithin(WaitTimeout, what, cond)
}

// WaitForWithin is WaitFor with a timeout.
func (c *Client) WaitForWithin(timeout time.Duration, what string, cond func([]Message) bool) []Message {
	c.t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		msgs, changed := c.msgs, c.changed
		c.mu.Unlock()
		if cond(msgs) {
			return append([]Message(nil), msgs...)
		}
		select {
		case <-changed:
		case <-deadline.C:
			c.t.Fatalf("brokertest: %s: not seen within %v (%d messages received%s)", what, timeout, len(msgs), lastTopics(msgs))
			return nil
		}
	}
}

// Latest returns the newest message on each topic.
func Latest(msgs []Message) map[string]Message {
	m := make(map[string]Message)
	for _, x := range msgs {
		m[x.Topic] = x
	}
	return m
}

func lastTopics(msgs []Message) string {
	if len(msgs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("; last: ")
	for i := max(0, len(msgs)-3); i < len(msgs); i++ {
		fmt.Fprintf(&b, "%s=%q ", msgs[i].Topic, truncate(msgs[i].Payload, 60))
	}
	return b.String()
}

func truncate(p []byte, n int) string {
	if len(p) > n {
		return string(p[:n]) + "…"
	}
	return string(p)
}

// PublishRetained publishes a retained message with an MQTT v5 content
// type at QoS 1 and waits for the broker's acknowledgement.
func (c *Client) PublishRetained(t testing.TB, topic string, payload []byte, contentType string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p := &paho.Publish{Topic: topic, Payload: payload, Retain: true, QoS: 1,
		Properties: &paho.PublishProperties{ContentType: contentType}}
	if _, err := c.cli.Publish(ctx, p); err != nil {
		t.Fatalf("brokertest: publish to %s: %v", topic, err)
	}
}
