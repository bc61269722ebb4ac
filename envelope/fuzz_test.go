package envelope

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParse feeds Parse and ParseWindow arbitrary bytes: they must
// return an envelope or a *SyntaxError, never panic; whatever parses
// must encode and parse back to the same values.
func FuzzParse(f *testing.F) {
	for _, e := range samples() {
		if len(e.Unit) > 1000 {
			continue // big seeds slow the mutator down
		}
		f.Add(AppendJSON(nil, &e))
		f.Add(AppendMsgpack(nil, &e))
	}
	for _, enc := range []Encoding{JSON, Msgpack} {
		w := NewWindowEncoder(enc)
		w.Reset(1, 2)
		w.Add("a/b", &typical)
		w.Add("c", &labelled)
		f.Add(w.Append(nil, 1, 2))
	}
	f.Add([]byte(`{"value":null,"nonfinite":"NaN","ts":1,"seq":2,"x":[{"y":"\u00e9"}]}`))
	f.Add([]byte("\x84\xa5value\xc0\xa9nonfinite\xa4-Inf\xa2ts\x01\xa3seq\x02"))
	f.Fuzz(func(t *testing.T, data []byte) {
		orig := bytes.Clone(data)
		var e Envelope
		err := Parse(data, &e)
		if !bytes.Equal(data, orig) {
			t.Fatal("Parse changed its input")
		}
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
		} else {
			for _, enc := range []Encoding{JSON, Msgpack} {
				var back Envelope
				b := Append(enc, nil, &e)
				if err := Parse(b, &back); err != nil {
					t.Fatalf("re-encoded %s %q does not parse: %v", enc, b, err)
				}
				want := wantAfterRoundTrip(e, enc)
				if !same(&back, &want) {
					t.Fatalf("%s round trip: got %+v, want %+v", enc, back, want)
				}
			}
		}
		var w Window
		if err := ParseWindow(data, &w); err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("window error %v does not wrap ErrMalformed", err)
		}
	})
}
