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
		{"not J1939, source unknown: na", "truck/{sa}/{signal}", gear, noSA, "truck/na/Gear"},
		{"J1939, source unknown: refused", "truck/{sa}/{signal}", speed, noSA, "leave {sa} out"},
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

// TestExpandTopicRefusesSAForJ1939 checks what an engine with one topic
// per signal does with {sa}: a J1939 signal is refused, another gets na,
// and a template checked without a database passes.
func TestExpandTopicRefusesSAForJ1939(t *testing.T) {
	j1939 := &dbc.Message{Name: "EEC1", J1939: true, Extended: true}
	if _, err := expandTopic("t/{sa}", &dbc.Signal{Name: "S", Message: j1939}, 0); !errors.Is(err, ErrTopic) {
		t.Errorf("J1939 signal: got error %v, want ErrTopic", err)
	}
	if got, err := expandTopic("t/{sa}/{signal}", &dbc.Signal{Name: "S", Message: &dbc.Message{Name: "M"}}, 0); err != nil || got != "t/na/S" {
		t.Errorf("plain signal: got %q, %v; want t/na/S", got, err)
	}
	if err := checkTemplate("t/{sa}/{signal}"); err != nil {
		t.Errorf("checkTemplate: got %v, want nil", err)
	}
}
