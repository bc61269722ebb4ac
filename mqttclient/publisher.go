package mqttclient

import (
	"context"
	"errors"
	"fmt"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
)

// Publisher publishes messages on one topic through a connection. It
// reuses its publish packet, so it is for one goroutine at a time.
type Publisher struct {
	cm  *autopaho.ConnectionManager
	pub paho.Publish
}

// NewPublisher returns a publisher on topic at the given QoS, retained or
// not, with an MQTT v5 content type unless contentType is empty.
func NewPublisher(cm *autopaho.ConnectionManager, topic string, qos byte, retain bool, contentType string) *Publisher {
	p := &Publisher{cm: cm, pub: paho.Publish{Topic: topic, QoS: qos, Retain: retain}}
	if contentType != "" {
		p.pub.Properties = &paho.PublishProperties{ContentType: contentType}
	}
	return p
}

// Publish sends payload. At QoS 0 it returns once the message is written
// to the connection; at QoS 1 once the broker acknowledged it. It returns
// autopaho.ConnectionDownError while the connection is down. payload may
// be reused after Publish returns at QoS 0; at QoS 1 paho may keep it for
// a retransmission, so the caller must not reuse it.
func (p *Publisher) Publish(ctx context.Context, payload []byte) error {
	p.pub.Payload = payload
	_, err := p.cm.Publish(ctx, &p.pub)
	p.pub.Payload = nil
	return err
}

// ErrPublishRefused: the broker answered a QoS 1 publish with a failure
// reason code; 0x87, not authorized, is a missing write right in its
// ACL.
var ErrPublishRefused = errors.New("mqttclient: the broker refused the publish")

// pubackReasons name the PUBACK failure codes (MQTT v5, 3.4.2.1) a
// publisher can do something about.
var pubackReasons = map[byte]string{
	0x87: "not authorized: the user may not write this topic (the broker's ACL)",
	0x90: "topic name invalid",
	0x97: "quota exceeded",
	0x99: "payload format invalid",
}

// Confirm publishes payload once at QoS 1, whatever the publisher's
// QoS, and returns an error wrapping ErrPublishRefused when the broker
// refuses it. A broker drops a QoS 0 message the client may not publish
// without a word (mosquitto does), so a QoS 0 publisher learns whether
// it may write its topic only from one message at QoS 1. payload may be
// reused once Confirm returns.
func (p *Publisher) Confirm(ctx context.Context, payload []byte) error {
	pub := p.pub
	pub.QoS = 1
	pub.Payload = append([]byte(nil), payload...) // paho keeps it for a retransmission
	resp, err := p.cm.Publish(ctx, &pub)
	if resp == nil || resp.ReasonCode < 0x80 {
		return err
	}
	why, ok := pubackReasons[resp.ReasonCode]
	if !ok {
		why = "refused"
	}
	return fmt.Errorf("%w on %s: %s (PUBACK reason code 0x%02X)", ErrPublishRefused, pub.Topic, why, resp.ReasonCode)
}
