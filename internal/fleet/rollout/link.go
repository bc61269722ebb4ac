package rollout

import (
	"context"
	"fmt"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/yukart/candec/internal/fleet/mqtt311"
	"github.com/yukart/candec/mqttclient"
)

// link5 speaks MQTT 5 through paho, as every candec client does.
type link5 struct{ cm *autopaho.ConnectionManager }

func dial5(ctx context.Context, cfg Config, on func(*paho.Publish)) (link, error) {
	att := mqttclient.NewAttempts()
	cm, err := mqttclient.Connect(ctx, mqttclient.Config{Settings: cfg.Settings, ConnectTimeout: cfg.Timeout,
		OnConnectError: att.Record, OnPublish: on})
	if err != nil {
		return nil, err
	}
	l := link5{cm}
	if err := att.Await(ctx, cm, cfg.Settings.Broker, cfg.Timeout); err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

func (l link5) subscribe(ctx context.Context, filters ...string) error {
	subs := make([]paho.SubscribeOptions, len(filters))
	for i, f := range filters {
		subs[i] = paho.SubscribeOptions{Topic: f}
	}
	sa, err := l.cm.Subscribe(ctx, &paho.Subscribe{Subscriptions: subs})
	if err == nil && sa != nil {
		for i, r := range sa.Reasons {
			if r >= 0x80 && i < len(subs) {
				return fmt.Errorf("the broker refused the subscription to %s (reason %#x)", subs[i].Topic, r)
			}
		}
	}
	return err
}

func (l link5) publish(ctx context.Context, topic string, payload []byte, retain bool, contentType string) error {
	p := &paho.Publish{Topic: topic, QoS: 1, Retain: retain, Payload: payload}
	if contentType != "" {
		p.Properties = &paho.PublishProperties{ContentType: contentType}
	}
	r, err := l.cm.Publish(ctx, p)
	if err == nil && r != nil && r.ReasonCode >= 0x80 {
		err = fmt.Errorf("the broker refused it (reason %#x): may the user write %s?", r.ReasonCode, topic)
	}
	return err
}

func (l link5) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = l.cm.Disconnect(ctx)
}

// link311 speaks MQTT 3.1.1 through package mqtt311: one connection,
// no reconnection (a lost one fails the command, which says so).
type link311 struct{ c *mqtt311.Client }

func dial311(ctx context.Context, cfg Config, on func(topic string, payload []byte)) (link, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	c, err := mqtt311.Dial(ctx, cfg.Settings, func(topic, payload []byte, _ int64) { on(string(topic), payload) })
	if err != nil {
		return nil, fmt.Errorf("rollout: no MQTT 3.1.1 connection to %s within %v: %w", cfg.Settings.Broker, cfg.Timeout, err)
	}
	return link311{c}, nil
}

func (l link311) subscribe(ctx context.Context, filters ...string) error {
	return l.c.Subscribe(ctx, filters...)
}

// publish: an MQTT 3.1.1 PUBACK carries no reason, so a message the
// broker's permissions refuse may be acknowledged and dropped
// (nats-server does): `campaign status` shows what each car holds.
func (l link311) publish(ctx context.Context, topic string, payload []byte, retain bool, _ string) error {
	return l.c.PublishAcked(ctx, topic, payload, retain)
}

func (l link311) close() { _ = l.c.Close() }
