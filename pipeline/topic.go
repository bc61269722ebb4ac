package pipeline

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/base/termtext"
)

// The {sa} placeholder is a J1939 source address: the low byte of the
// frame's ID, as two upper-case hex digits ("00", "F9"), the way candump
// writes IDs. A message that is not J1939 has no source address; there
// {sa} is saNone, which no source address can be, so that a database
// that mixes J1939 and other messages can use one template.
const saNone = "na"

// Source addresses of expandTopicSA that are none: anySA for a signal
// whose topic does not depend on one, templateSA for the topics of a
// J1939 signal kept per source, with {sa} left in (no DBC name has a
// brace, so no source's topic can be it).
const (
	anySA      = -1
	templateSA = -2
)

// hasSA reports whether a topic template has {sa}: then the Engine
// keeps each J1939 message per source address.
func hasSA(tmpl string) bool { return strings.Contains(tmpl, "{sa}") }

// isJ1939 reports whether m's frames carry a source address: a J1939
// parameter group with a 29-bit ID, as the decoder matches by PGN.
func isJ1939(m *dbc.Message) bool { return m != nil && m.J1939 && m.Extended }

// expandTopic fills a topic template for one signal, {sa} as saNone.
func expandTopic(tmpl string, sig *dbc.Signal, bus uint8) (string, error) {
	return expandTopicSA(tmpl, sig, bus, anySA)
}

// expandTopicSA fills a topic template for one signal and, for a J1939
// message, the source address sa (0–255, or templateSA; anySA, which
// {sa} refuses for a J1939 message, when the signal has one topic).
func expandTopicSA(tmpl string, sig *dbc.Signal, bus uint8, sa int) (string, error) {
	var b strings.Builder
	for rest := tmpl; rest != ""; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i])
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("%w: template %s: unclosed {", ErrTopic, termtext.Quote(tmpl))
		}
		switch name := rest[i+1 : i+j]; name {
		case "signal":
			b.WriteString(sig.Name)
		case "message":
			b.WriteString(sig.Message.Name)
		case "bus":
			fmt.Fprintf(&b, "can%d", bus)
		case "sa":
			switch {
			case !isJ1939(sig.Message):
				b.WriteString(saNone)
			case sa == templateSA:
				b.WriteString("{sa}")
			case sa < 0 || sa > 0xFF:
				return "", fmt.Errorf("%w: template %s: J1939 message %s has no source address here", ErrTopic, termtext.Quote(tmpl), sig.Message.Name)
			default:
				const hex = "0123456789ABCDEF"
				b.WriteByte(hex[sa>>4])
				b.WriteByte(hex[sa&0xF])
			}
		default:
			return "", fmt.Errorf("%w: template %s: unknown placeholder %s (want {signal}, {message}, {bus} or {sa})", ErrTopic, termtext.Quote(tmpl), termtext.Quote("{"+name+"}"))
		}
		rest = rest[i+j+1:]
	}
	topic := b.String()
	if err := checkTopic(topic); err != nil {
		return "", fmt.Errorf("%w (template %s, signal %s)", err, termtext.Quote(tmpl), sig.FullName())
	}
	return topic, nil
}

// checkTemplate validates a template without a database.
func checkTemplate(tmpl string) error {
	m := &dbc.Message{Name: "message"}
	_, err := expandTopic(tmpl, &dbc.Signal{Name: "signal", Message: m}, 0)
	return err
}

// checkTopic reports a topic MQTT would refuse to publish on.
func checkTopic(t string) error {
	switch {
	case t == "":
		return fmt.Errorf("%w: empty topic", ErrTopic)
	case len(t) > 65535:
		return fmt.Errorf("%w: topic longer than 65535 bytes", ErrTopic)
	case strings.ContainsAny(t, "+#\x00"):
		return fmt.Errorf("%w: topic %s contains a wildcard or NUL", ErrTopic, termtext.Quote(t))
	case !utf8.ValidString(t):
		return fmt.Errorf("%w: topic %s is not UTF-8", ErrTopic, termtext.Quote(t))
	case strings.IndexFunc(t, unicode.IsControl) >= 0:
		// MQTT says a topic should not hold one; a "topic payload" line
		// and a terminal would break on it.
		return fmt.Errorf("%w: topic %s contains a control character", ErrTopic, termtext.Quote(t))
	}
	return nil
}

// topicClashes collects every topic the template gives to more than
// one published signal, so that one error lets a user fix them all.
type topicClashes struct {
	topics []string                 // in the order first found
	sigs   map[string][]*dbc.Signal // by topic, in signal order
}

func (c *topicClashes) add(topic string, owner, sig *dbc.Signal) {
	if c.sigs == nil {
		c.sigs = make(map[string][]*dbc.Signal)
	}
	if _, ok := c.sigs[topic]; !ok {
		c.topics = append(c.topics, topic)
		c.sigs[topic] = []*dbc.Signal{owner}
	}
	c.sigs[topic] = append(c.sigs[topic], sig)
}

// err lists every clash on one line: the count, the way out, then each
// topic with the signals that share it.
func (c *topicClashes) err(tmpl string) error {
	var b strings.Builder
	for i, topic := range c.topics {
		if i > 0 {
			b.WriteString("; ")
		}
		sigs := c.sigs[topic]
		for j, s := range sigs {
			switch {
			case j == 0:
			case j == len(sigs)-1:
				b.WriteString(" and ")
			default:
				b.WriteString(", ")
			}
			b.WriteString(s.FullName())
		}
		fmt.Fprintf(&b, " → %q", topic)
	}
	nsig := 0
	for _, sigs := range c.sigs {
		nsig += len(sigs)
	}
	what := fmt.Sprintf("1 topic (%d signals)", nsig)
	if n := len(c.topics); n > 1 {
		what = fmt.Sprintf("%d topics (%d signals)", n, nsig)
	}
	return fmt.Errorf("%w: template %q gives more than one signal the same topic on %s; put {message} in the template or set publish: false for all but one signal of each: %s",
		ErrTopic, tmpl, what, b.String())
}
