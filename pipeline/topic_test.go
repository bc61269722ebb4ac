package pipeline

import (
	"errors"
	"strings"
	"testing"

	"github.com/yukart/candec/dbc"
)

func TestExpandTopicSA(t *testing.T) {
	j1939 := &dbc.Message{Name: "EEC1", ID: 0x0CF004FE, Extended: true, J1939: true}
	plain := &dbc.Message{Name: "GEAR", ID: 0x123}
	speed := &dbc.Signal{Name: "EngineSpeed", Message: j1939}
	gear := &dbc.Signal{Name: "Gear", Message: plain}
	tests := []struct {
		name string
		tmpl string
		sig  *dbc.Signal
		sa   int
		want string // the topic, or the error's text
	}{
		{"J1939, source 00", "truck/{sa}/{signal}", speed, 0x00, "truck/00/EngineSpeed"},
		{"J1939, source F9 in upper case", "truck/{sa}/{message}/{signal}", speed, 0xF9, "truck/F9/EEC1/EngineSpeed"},
		{"J1939, source 0A padded", "{bus}/{sa}", speed, 0x0A, "can1/0A"},
		{"not J1939: na", "truck/{sa}/{signal}", gear, 0x12, "truck/na/Gear"},
		{"not J1939, source unknown: na", "truck/{sa}/{signal}", gear, anySA, "truck/na/Gear"},
		{"J1939, source unknown: refused", "truck/{sa}/{signal}", speed, anySA, "has no source address here"},
		{"J1939, the template of its sources", "truck/{sa}/{signal}", speed, templateSA, "truck/{sa}/EngineSpeed"},
		{"not J1939, the template of sources: na", "truck/{sa}/{signal}", gear, templateSA, "truck/na/Gear"},
		{"without {sa}, the source does not matter", "truck/{signal}", speed, 0x33, "truck/EngineSpeed"},
		{"unknown placeholder names {sa}", "truck/{src}", speed, 0, "(want {signal}, {message}, {bus} or {sa})"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := expandTopicSA(tt.tmpl, tt.sig, 1, tt.sa)
			if err != nil {
				if !errors.Is(err, ErrTopic) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("got error %v, want ErrTopic with %q", err, tt.want)
				}
				return
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestExpandTopicSAOnly29Bit: a J1939 flag on an 11-bit message gives no
// source address (the decoder matches it by ID, as plain CAN): {sa} is
// na there.
func TestExpandTopicSAOnly29Bit(t *testing.T) {
	short := &dbc.Message{Name: "M", ID: 0x123, J1939: true}
	if got, err := expandTopic("t/{sa}/{signal}", &dbc.Signal{Name: "S", Message: short}, 0); err != nil || got != "t/na/S" {
		t.Errorf("got %q, %v; want t/na/S", got, err)
	}
	if err := checkTemplate("t/{sa}/{signal}"); err != nil {
		t.Errorf("checkTemplate: got %v, want nil", err)
	}
}
