package mqttclient

import "testing"

func TestOverlap(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"yukart/can/raw", "yukart/can/raw", true},
		{"yukart/can/raw", "yukart/can/raw2", false},
		{"yukart/can/raw", "yukart/can", false},
		{"yukart/can/raw", "yukart/can/raw/x", false},
		{"#", "yukart/vehicle/MOT_Speed", true},
		{"#", "yukart", true},
		{"#", "#", true},
		{"#", "+", true},
		{"+", "yukart", true},
		{"+", "yukart/decoder", false},
		{"+/+", "yukart/decoder", true},
		{"yukart/+/raw", "yukart/can/raw", true},
		{"yukart/+/raw", "yukart/vehicle/MOT_Speed", false},
		{"yukart/#", "yukart/decoder/status", true},
		{"yukart/#", "yukart", true}, // # matches the parent level
		{"yukart/can/#", "yukart/vehicle/+", false},
		{"yukart/can/#", "yukart/+/x", true},
		{"yukart/+", "+/vehicle", true},
		{"a/+/c", "+/b/+", true},
		{"a/+/c", "+/b/d", false},
		{"a/+", "a", false},
		{"a/+", "a/", true}, // + matches an empty level
		{"a//b", "a/+/b", true},
		{"a//b", "a/b", false},
		{"/a", "+/a", true},
		{"/a", "a", false},
		// $ topics: a filter that starts with a wildcard leaves them out.
		{"#", "$SYS/broker/uptime", false},
		{"+/broker/uptime", "$SYS/broker/uptime", false},
		{"$SYS/#", "$SYS/broker/uptime", true},
		{"$SYS/+/uptime", "$SYS/broker/uptime", true},
		{"$SYS/#", "#", false},
		{"$SYS/#", "+/#", false},
		{"#", "+/x", true},
		{"yukart/#", "yukart/$x", true}, // $ only matters at the first level
		{"$share", "$share", true},
	} {
		for _, ab := range [][2]string{{c.a, c.b}, {c.b, c.a}} {
			if got := Overlap(ab[0], ab[1]); got != c.want {
				t.Errorf("Overlap(%q, %q): got %v, want %v", ab[0], ab[1], got, c.want)
			}
		}
	}
}
