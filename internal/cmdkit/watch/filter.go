package watch

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrFilter: a topic filter that a broker would refuse.
var ErrFilter = errors.New("watch: bad topic filter")

// maxFilterLen is MQTT's limit on a UTF-8 string: a two-byte length.
const maxFilterLen = 65535

// ValidateFilter reports a topic filter that breaks MQTT's rules: it
// must be non-empty UTF-8 without NUL and at most 65535 bytes, '#' only
// as the whole last level, '+' only as a whole level. A broker closes the
// connection of a client that subscribes to such a filter (mosquitto
// calls it a malformed packet), so it is checked before connecting:
// otherwise every reconnection would subscribe, and be dropped, again.
func ValidateFilter(f string) error {
	switch {
	case f == "":
		return fmt.Errorf("%w: empty", ErrFilter)
	case len(f) > maxFilterLen:
		return fmt.Errorf("%w: %d bytes, at most %d", ErrFilter, len(f), maxFilterLen)
	case strings.Contains(f, "\x00"):
		return fmt.Errorf("%w %q: contains NUL", ErrFilter, f)
	case !utf8.ValidString(f):
		return fmt.Errorf("%w %q: not UTF-8", ErrFilter, f)
	}
	levels := strings.Split(f, "/")
	for i, l := range levels {
		if strings.Contains(l, "#") && (l != "#" || i != len(levels)-1) {
			return fmt.Errorf("%w %q: '#' must be the whole last level", ErrFilter, f)
		}
		if strings.Contains(l, "+") && l != "+" {
			return fmt.Errorf("%w %q: '+' must be a whole level", ErrFilter, f)
		}
	}
	return nil
}
