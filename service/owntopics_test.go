package service

import (
	"errors"
	"strings"
	"testing"
)

// TestRawTopicOverlapRefused: a raw topic filter that matches one of the
// decoder's own topics (its status, its window stream, any topic the
// template can give a signal) is refused at start with an error that
// names raw_topic, where it was set and the topic it meets; filters
// that only look alike pass.
func TestRawTopicOverlapRefused(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       string // "" when accepted
	}{
		{"default", "", ""},
		{"everything", "raw_topic: '#'\n", `:2: raw_topic: "#" matches the status_topic "yukart/decoder/status"`},
		{"the car's tree", "raw_topic: yukart/#\n", `raw_topic: "yukart/#" matches the status_topic`},
		{"the status topic", "raw_topic: yukart/decoder/status\n", `matches the status_topic "yukart/decoder/status"`},
		{"the decoder's tree", "raw_topic: yukart/decoder/+\n", `matches the status_topic`},
		{"a signal topic", "raw_topic: yukart/vehicle/MOT_Speed\n", `matches signal topics of the topic_template "yukart/vehicle/{signal}"`},
		{"signal topics by +", "raw_topic: +/vehicle/+\n", `matches signal topics of the topic_template`},
		{"the template's parent with #", "raw_topic: yukart/vehicle/#\n", `matches signal topics`},
		{"a template of the file", "topic_template: car/{message}/{signal}\nraw_topic: car/can/raw\n", `:3: raw_topic: "car/can/raw" matches signal topics of the topic_template "car/{message}/{signal}" (`},
		{"a status topic of the file", "status_topic: yukart/can/raw\n", `raw_topic: "yukart/can/raw" matches the status_topic "yukart/can/raw" (`},
		{"the window stream", "window_topic: yukart/can/window\nraw_topic: yukart/can/+\n", `matches the window_topic "yukart/can/window"`},
		{"a sibling", "raw_topic: yukart/can/+\n", ""},
		{"a deeper raw level", "raw_topic: yukart/vehicle/raw/x\n", ""},
		{"$ topics apart", "status_topic: $candec/status\nraw_topic: '#'\ntopic_template: $candec/{signal}\n", ""},
		{"$ topics named", "status_topic: $candec/status\nraw_topic: $candec/#\ntopic_template: $candec/v/{signal}\n", `matches the status_topic "$candec/status"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeFile(t, "candec.yaml", "dbc: x.dbc\n"+tc.file)
			c, err := LoadConfig(file)
			if err == nil {
				err = c.Validate()
			}
			if tc.want == "" {
				if err != nil {
					t.Fatalf("got %v, want the config accepted", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrConfig) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want one line with %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), "the decoder would receive its own messages") {
				t.Errorf("got %v, want it to say why", err)
			}
		})
	}
}
