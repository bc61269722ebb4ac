package pipeline

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/yukart/candec/dbc"
)

// expandTopic fills a topic template for one signal.
func expandTopic(tmpl string, sig *dbc.Signal, bus uint8) (string, error) {
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
			return "", fmt.Errorf("%w: template %q: unclosed {", ErrTopic, tmpl)
		}
		switch name := rest[i+1 : i+j]; name {
		case "signal":
			b.WriteString(sig.Name)
		case "message":
			b.WriteString(sig.Message.Name)
		case "bus":
			fmt.Fprintf(&b, "can%d", bus)
		default:
			return "", fmt.Errorf("%w: template %q: unknown placeholder {%s} (want {signal}, {message} or {bus})", ErrTopic, tmpl, name)
		}
		rest = rest[i+j+1:]
	}
	topic := b.String()
	if err := checkTopic(topic); err != nil {
		return "", fmt.Errorf("%w (template %q, signal %s)", err, tmpl, sig.FullName())
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
		return fmt.Errorf("%w: topic %q contains a wildcard or NUL", ErrTopic, t)
	case !utf8.ValidString(t):
		return fmt.Errorf("%w: topic %q is not UTF-8", ErrTopic, t)
	}
	return nil
}
