package mqttclient

import (
	"errors"
	"fmt"
)

// ErrPublishArgs: a message MQTT cannot carry (an empty or too long
// topic or content type, a payload over the largest packet).
var ErrPublishArgs = errors.New("mqttclient: cannot publish")

// maxRemaining is the largest remaining length of an MQTT packet
// (MQTT v5, 1.5.5: four bytes of variable byte integer).
const maxRemaining = 268_435_455

// propContentType is the content type property's identifier (MQTT v5,
// 3.3.2.3.9).
const propContentType = 0x03

// checkPublish reports whether a QoS 0 PUBLISH of payload on topic with
// contentType fits MQTT's limits.
func checkPublish(topic string, payload []byte, contentType string) error {
	switch {
	case topic == "" || len(topic) > 0xFFFF:
		return fmt.Errorf("%w: topic of %d bytes, want 1 to 65535", ErrPublishArgs, len(topic))
	case len(contentType) > 0xFFFF:
		return fmt.Errorf("%w: %s: content type of %d bytes, want at most 65535", ErrPublishArgs, topic, len(contentType))
	case publishRemaining(topic, payload, contentType) > maxRemaining:
		return fmt.Errorf("%w: %s: payload of %d bytes, over MQTT's largest packet", ErrPublishArgs, topic, len(payload))
	}
	return nil
}

// publishProps is the length of a PUBLISH's properties with contentType.
func publishProps(contentType string) int {
	if contentType == "" {
		return 0
	}
	return 3 + len(contentType)
}

// publishRemaining is a QoS 0 PUBLISH's remaining length (MQTT v5,
// 3.3.2): the topic, the properties' length and the properties, the
// payload.
func publishRemaining(topic string, payload []byte, contentType string) int {
	props := publishProps(contentType)
	return 2 + len(topic) + vbiLen(props) + props + len(payload)
}

// appendPublish appends a QoS 0 PUBLISH packet (MQTT v5, 3.3) to b; the
// arguments passed checkPublish.
func appendPublish(b []byte, topic string, payload []byte, retain bool, contentType string) []byte {
	flags := byte(0x30) // PUBLISH, QoS 0, not a duplicate
	if retain {
		flags |= 1
	}
	b = append(b, flags)
	b = appendVBI(b, publishRemaining(topic, payload, contentType))
	b = append(b, byte(len(topic)>>8), byte(len(topic)))
	b = append(b, topic...)
	b = appendVBI(b, publishProps(contentType))
	if contentType != "" {
		b = append(b, propContentType, byte(len(contentType)>>8), byte(len(contentType)))
		b = append(b, contentType...)
	}
	return append(b, payload...)
}

// appendVBI appends n as an MQTT variable byte integer (MQTT v5, 1.5.5).
func appendVBI(b []byte, n int) []byte {
	for {
		d := byte(n % 128)
		n /= 128
		if n > 0 {
			d |= 0x80
		}
		b = append(b, d)
		if n == 0 {
			return b
		}
	}
}

// vbiLen is the length of n as a variable byte integer.
func vbiLen(n int) int {
	k := 1
	for n >= 128 {
		n /= 128
		k++
	}
	return k
}
