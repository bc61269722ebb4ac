package valuelog

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/frame"
)

// hostileFrame is a frame of two values of a message whose names, unit,
// label and interface are the given bytes: the first signal has a text
// (made once for the message), the second is not among the message's
// signals and is written from nothing (appendJSON, appendCSV).
func hostileFrame(msg, sig, unit, label string) (*frame.Frame, []decoder.Value) {
	m := &dbc.Message{Name: msg, ID: 0x123, Length: 8}
	s := &dbc.Signal{Name: sig, Message: m, Factor: 1, Unit: unit, Values: []dbc.ValueDescription{{Value: 3, Label: label}}}
	m.Signals = []*dbc.Signal{s}
	stray := &dbc.Signal{Name: sig + "2", Message: m, Index: 5, Factor: 1, Unit: label, Values: []dbc.ValueDescription{{Value: 3, Label: unit}}}
	return &frame.Frame{Time: 1791563856001301000, ID: 0x123, Len: 8}, []decoder.Value{
		{Signal: s, Raw: 3, Int: 3, Phys: 3, Flags: decoder.Exact},
		{Signal: stray, Raw: 3, Int: 3, Phys: 3, Flags: decoder.Exact},
	}
}

// csvText is what a CSV field of s reads back as: the rule of
// appendCSVField, each control character and each byte of invalid UTF-8
// replaced by U+FFFD.
func csvText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r >= 0x7f && r <= 0x9f {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	}
	return b.String()
}

// jsonText is what a JSON string of s parses back as: s with each byte of
// invalid UTF-8 replaced by U+FFFD (controls are escaped, not replaced).
func jsonText(s string) string {
	var b strings.Builder
	for _, r := range s { // a byte of invalid UTF-8 ranges as U+FFFD
		b.WriteRune(r)
	}
	return b.String()
}

func addHostileSeeds(f *testing.F) {
	f.Add("MCU_MotorStatus", "MOT_Speed", "rpm", "Forward", "can0")
	f.Add("M", "S", "\x1b]0;pwned\x07", "\x1b[2J", "can\xff")
	f.Add("M,\"x\"", "S\r\n", "°C", "a\u2028b\u0085", "\"can0\",")
	f.Add("\xe2\x82", "\x80", "\x7f", "\\", "\t")
}

// FuzzWriteJSON puts any bytes in the message and signal names, the unit,
// the label and the interface: every line must be valid JSON whose
// strings read back as the text, invalid UTF-8 replaced by U+FFFD.
func FuzzWriteJSON(f *testing.F) {
	addHostileSeeds(f)
	f.Fuzz(func(t *testing.T, msg, sig, unit, label, iface string) {
		fr, vals := hostileFrame(msg, sig, unit, label)
		var out bytes.Buffer
		w := NewWriter(&out, JSON)
		if err := w.Write(fr, iface, vals); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(out.String(), "\n")
		if lines[len(lines)-1] != "" {
			t.Fatalf("output does not end with a line end: %q", out.String())
		}
		lines = lines[:len(lines)-1]
		if len(lines) != 2 {
			t.Fatalf("got %d lines, want 2: %q", len(lines), out.String())
		}
		for i, line := range lines {
			if !json.Valid([]byte(line)) {
				t.Fatalf("line %d is not valid JSON: %q", i+1, line)
			}
			var got struct {
				Bus, Signal, Unit, Label string
			}
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				t.Fatalf("line %d: %v", i+1, err)
			}
			s := vals[i].Signal
			want := struct{ Bus, Signal, Unit, Label string }{jsonText(iface), jsonText(msg) + "." + jsonText(s.Name), jsonText(s.Unit), jsonText(s.Values[0].Label)}
			if got != want {
				t.Fatalf("line %d %q reads back as %+q, want %+q", i+1, line, got, want)
			}
			for _, c := range []byte(line[:len(line)-1]) {
				if c < 0x20 || c == 0x7f {
					t.Fatalf("line %d holds the control byte %#x: %q", i+1, c, line)
				}
			}
		}
	})
}

// FuzzWriteCSV is FuzzWriteJSON for CSV: every row is one line that
// encoding/csv reads back as the header's ten fields, the text by the
// rule of appendCSVField.
func FuzzWriteCSV(f *testing.F) {
	addHostileSeeds(f)
	f.Fuzz(func(t *testing.T, msg, sig, unit, label, iface string) {
		fr, vals := hostileFrame(msg, sig, unit, label)
		var out bytes.Buffer
		w := NewWriter(&out, CSV)
		if err := w.Write(fr, iface, vals); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(out.String(), "\n"); n != 3 {
			t.Fatalf("got %d lines, want 3 (a header and two rows): %q", n, out.String())
		}
		r := csv.NewReader(&out)
		r.FieldsPerRecord = 10
		if _, err := r.Read(); err != nil {
			t.Fatalf("header: %v", err)
		}
		for i := range vals {
			rec, err := r.Read()
			if err != nil {
				t.Fatalf("row %d: %v", i+1, err)
			}
			s := vals[i].Signal
			got := [4]string{rec[2], rec[4], rec[7], rec[8]}
			want := [4]string{csvText(iface), csvText(msg + "." + s.Name), csvText(s.Unit), csvText(s.Values[0].Label)}
			if got != want {
				t.Fatalf("row %d reads back as %+q, want %+q", i+1, got, want)
			}
		}
		if _, err := r.Read(); err != io.EOF {
			t.Fatalf("after the rows: got %v, want EOF", err)
		}
	})
}

// TestWriteHostileTextAllocs: text that needs escaping or replacing
// costs no allocation per line either (the label is looked up each
// line; names and unit are made once).
func TestWriteHostileTextAllocs(t *testing.T) {
	for _, format := range []Format{JSON, CSV} {
		fr, vals := hostileFrame("M\x1b", "S\xff", "\u009b°C", "a,\"\x07\"")
		vals = vals[:1]
		w := NewWriter(io.Discard, format)
		w.Write(fr, "can\xff", vals)
		if n := testing.AllocsPerRun(1000, func() { w.Write(fr, "can\xff", vals) }); n != 0 {
			t.Errorf("format %d: %v allocations per frame, want 0", format, n)
		}
	}
}
