package mqttclient

import "strings"

// Overlap reports whether some topic matches both topic filters a and b
// (MQTT v5, 4.7): '+' matches one whole level, '#' as the last level
// matches the parent level and any number of levels below it, and a
// filter that starts with a wildcard matches no topic that starts with
// '$' (4.7.2). A topic with no wildcard is a filter that matches only
// itself, so Overlap(filter, topic) tells whether filter matches topic.
// Both must be valid filters; an empty level is a level like any other.
func Overlap(a, b string) bool {
	first := true
	for {
		la, resta, moreA := strings.Cut(a, "/")
		lb, restb, moreB := strings.Cut(b, "/")
		if first {
			first = false
			// A wildcard first level leaves out the $ topics: it meets
			// a literal $ level only in another wildcard's company.
			if wild(la) && !wild(lb) && strings.HasPrefix(lb, "$") ||
				wild(lb) && !wild(la) && strings.HasPrefix(la, "$") {
				return false
			}
		}
		if la == "#" || lb == "#" {
			return true
		}
		if la != "+" && lb != "+" && la != lb {
			return false
		}
		switch {
		case !moreA && !moreB:
			return true
		case !moreA:
			// a has ended; "x/#" also matches "x".
			return restb == "#"
		case !moreB:
			return resta == "#"
		}
		a, b = resta, restb
	}
}

func wild(level string) bool { return level == "+" || level == "#" }
