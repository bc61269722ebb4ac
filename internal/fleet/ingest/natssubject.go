package ingest

import (
	"strconv"
	"strings"
)

// PartitionSubject is the subject of partition k's messages in the
// stream: p.<k>.<the car's subject>, as the stream's subject transform
// p.{{partition(N,1)}}.fleet.{{wildcard(1)}}.> files them
// (deploy/nats).
func PartitionSubject(k int) string { return "p." + strconv.Itoa(k) + ".>" }

// topicOfSubject returns the MQTT topic a car published a stream
// message on: its subject less the partition's p.<k>. and turned back
// from the subject the server made of the topic (NATS's MQTT rules:
// a level separator / is a ., a . in a level is //, an empty level is
// a / token). It reports false for a subject not of a partition.
func topicOfSubject(subject string) (string, bool) {
	rest, ok := strings.CutPrefix(subject, "p.")
	if !ok {
		return "", false
	}
	_, rest, ok = strings.Cut(rest, ".")
	if !ok || rest == "" {
		return "", false
	}
	return mqttTopic(rest), true
}

// mqttTopic reverses the server's conversion of an MQTT topic to a
// subject (nats-server's natsSubjectToMQTTTopic): "//" is a "." in a
// level, "/." a level separator after an empty level, "." a level
// separator, and a "/" otherwise stands for an empty level.
func mqttTopic(subject string) string {
	if !strings.ContainsRune(subject, '/') {
		return strings.ReplaceAll(subject, ".", "/")
	}
	var b strings.Builder
	b.Grow(len(subject))
	for i := 0; i < len(subject); i++ {
		switch c := subject[i]; c {
		case '/':
			if i+1 < len(subject) && (subject[i+1] == '.' || subject[i+1] == '/') {
				if subject[i+1] == '.' {
					b.WriteByte('/')
				} else {
					b.WriteByte('.')
				}
				i++
			}
		case '.':
			b.WriteByte('/')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
