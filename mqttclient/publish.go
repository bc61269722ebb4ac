package mqttclient

import (
	"errors"
	"fmt"

	"github.com/yukart/candec/mqttclient/wire"
)

// ErrPublishArgs: a message MQTT cannot carry (an empty or too long
// topic or content type, a payload over the largest packet).
var ErrPublishArgs = errors.New("mqttclient: cannot publish")

// checkPublish reports whether a QoS 0 PUBLISH of payload on topic with
// contentType fits MQTT's limits.
func checkPublish(topic string, payload []byte, contentType string) error {
	switch {
	case topic == "" || len(topic) > 0xFFFF:
		return fmt.Errorf("%w: topic of %d bytes, want 1 to 65535", ErrPublishArgs, len(topic))
	case len(contentType) > 0xFFFF:
		return fmt.Errorf("%w: %s: content type of %d bytes, want at most 65535", ErrPublishArgs, topic, len(contentType))
	case wire.PublishRemainingV5(topic, payload, contentType) > wire.MaxRemaining:
		return fmt.Errorf("%w: %s: payload of %d bytes, over MQTT's largest packet", ErrPublishArgs, topic, len(payload))
	}
	return nil
}
