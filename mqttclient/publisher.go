package mqttclient

import (
	"context"

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
