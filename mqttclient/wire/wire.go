package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// ErrMalformed: a packet that does not follow MQTT.
var ErrMalformed = errors.New("mqtt: malformed packet")

// Packet types (MQTT 3.1.1 and v5, section 2.1.2).
const (
	Connect    = 1
	Connack    = 2
	Publish    = 3
	Puback     = 4
	Subscribe  = 8
	Suback     = 9
	Pingreq    = 12
	Pingresp   = 13
	Disconnect = 14
)

// MaxRemaining is the largest remaining length of an MQTT packet (four
// bytes of variable byte integer; MQTT v5, 1.5.5).
const MaxRemaining = 268_435_455

// propContentType is the content type property's identifier (MQTT v5,
// 3.3.2.3.9).
const propContentType = 0x03

// AppendVBI appends n as an MQTT variable byte integer (MQTT v5, 1.5.5;
// 3.1.1's remaining length).
func AppendVBI(b []byte, n int) []byte {
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

// VBILen is the length of n as a variable byte integer.
func VBILen(n int) int {
	k := 1
	for n >= 128 {
		n /= 128
		k++
	}
	return k
}

// AppendString appends s as an MQTT string: its length in two bytes,
// then its bytes.
func AppendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// AppendPacket appends a packet of first byte first (type << 4 | flags)
// and body to b.
func AppendPacket(b []byte, first byte, body []byte) []byte {
	b = append(b, first)
	b = AppendVBI(b, len(body))
	return append(b, body...)
}

// publishProps is the length of a PUBLISH's properties with contentType.
func publishProps(contentType string) int {
	if contentType == "" {
		return 0
	}
	return 3 + len(contentType)
}

// PublishRemainingV5 is a QoS 0 MQTT v5 PUBLISH's remaining length
// (3.3.2): the topic, the properties' length and the properties, the
// payload.
func PublishRemainingV5(topic string, payload []byte, contentType string) int {
	props := publishProps(contentType)
	return 2 + len(topic) + VBILen(props) + props + len(payload)
}

// AppendPublishV5 appends a QoS 0 MQTT v5 PUBLISH packet (3.3) to b,
// with the content type property unless contentType is empty. The
// caller checks MQTT's limits: a topic of 1 to 65,535 bytes, a content
// type of at most 65,535, PublishRemainingV5 at most MaxRemaining.
func AppendPublishV5(b []byte, topic string, payload []byte, retain bool, contentType string) []byte {
	flags := byte(Publish << 4) // QoS 0, not a duplicate
	if retain {
		flags |= 1
	}
	b = append(b, flags)
	b = AppendVBI(b, PublishRemainingV5(topic, payload, contentType))
	b = append(b, byte(len(topic)>>8), byte(len(topic)))
	b = append(b, topic...)
	b = AppendVBI(b, publishProps(contentType))
	if contentType != "" {
		b = append(b, propContentType, byte(len(contentType)>>8), byte(len(contentType)))
		b = append(b, contentType...)
	}
	return append(b, payload...)
}

// AppendPublishV311 appends an MQTT 3.1.1 PUBLISH, not retained, of
// payload on topic at qos (0 or 1) with packet id (ignored at QoS 0) to
// b.
func AppendPublishV311(b []byte, topic string, qos byte, id uint16, payload []byte) []byte {
	n := 2 + len(topic) + len(payload)
	if qos > 0 {
		n += 2
	}
	b = append(b, Publish<<4|qos<<1)
	b = AppendVBI(b, n)
	b = AppendString(b, topic)
	if qos > 0 {
		b = binary.BigEndian.AppendUint16(b, id)
	}
	return append(b, payload...)
}

// AppendConnectV311 appends an MQTT 3.1.1 CONNECT with a clean session
// to b: the user name when user is not empty, the password when both
// are not (3.1.1 allows a password only with a user name).
func AppendConnectV311(b []byte, clientID, user, pass string, keepAlive time.Duration) []byte {
	flags := byte(0x02) // clean session
	if user != "" {
		flags |= 0x80
		if pass != "" {
			flags |= 0x40
		}
	}
	var vh []byte
	vh = AppendString(vh, "MQTT")
	vh = append(vh, 4, flags) // level 3.1.1
	vh = binary.BigEndian.AppendUint16(vh, uint16(keepAlive/time.Second))
	vh = AppendString(vh, clientID)
	if flags&0x80 != 0 {
		vh = AppendString(vh, user)
	}
	if flags&0x40 != 0 {
		vh = AppendString(vh, pass)
	}
	return AppendPacket(b, Connect<<4, vh)
}

// AppendSubscribeV311 appends an MQTT 3.1.1 SUBSCRIBE of filters at QoS
// 0 with packet id to b.
func AppendSubscribeV311(b []byte, id uint16, filters ...string) []byte {
	vh := binary.BigEndian.AppendUint16(nil, id)
	for _, f := range filters {
		vh = AppendString(vh, f)
		vh = append(vh, 0)
	}
	return AppendPacket(b, Subscribe<<4|0x2, vh)
}

// ReadPacket reads one packet of at most max bytes after its fixed
// header from r into *buf (grown as needed) and returns its first byte
// and its body (the bytes after the remaining length), valid until the
// next call. A connection that ends inside a packet is
// io.ErrUnexpectedEOF; before one, io.EOF.
func ReadPacket(r *bufio.Reader, buf *[]byte, max int) (byte, []byte, error) {
	typ, err := r.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	var n, shift int
	for i := 0; ; i++ {
		b, err := r.ReadByte()
		if err != nil {
			return 0, nil, unexpected(err)
		}
		n |= int(b&0x7f) << shift
		if b&0x80 == 0 {
			break
		}
		shift += 7
		if i == 3 {
			return 0, nil, fmt.Errorf("%w: remaining length longer than 4 bytes", ErrMalformed)
		}
	}
	if n > max {
		return 0, nil, fmt.Errorf("%w: packet of %d bytes (at most %d)", ErrMalformed, n, max)
	}
	if cap(*buf) < n {
		*buf = make([]byte, n)
	}
	b := (*buf)[:n]
	if _, err := io.ReadFull(r, b); err != nil {
		return 0, nil, unexpected(err)
	}
	return typ, b, nil
}

// ParsePublishV311 splits an MQTT 3.1.1 PUBLISH body into topic and
// payload; typ is the packet's first byte. The packet id of a QoS 1 or 2
// PUBLISH is skipped.
func ParsePublishV311(typ byte, body []byte) (topic, payload []byte, err error) {
	if len(body) < 2 {
		return nil, nil, fmt.Errorf("%w: PUBLISH shorter than its topic length", ErrMalformed)
	}
	tl := int(binary.BigEndian.Uint16(body))
	rest := body[2:]
	if tl > len(rest) {
		return nil, nil, fmt.Errorf("%w: PUBLISH topic of %d bytes in %d", ErrMalformed, tl, len(rest))
	}
	topic, rest = rest[:tl], rest[tl:]
	if qos := typ >> 1 & 3; qos > 0 {
		if qos == 3 || len(rest) < 2 {
			return nil, nil, fmt.Errorf("%w: PUBLISH with QoS %d", ErrMalformed, qos)
		}
		rest = rest[2:]
	}
	return topic, rest, nil
}

func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
