package envelope

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	gojson "github.com/goccy/go-json"
	"github.com/vmihailenco/msgpack/v5"
)

// samples covers every kind, flag, and string case the encoders handle.
func samples() []Envelope {
	return []Envelope{
		{Kind: Int, Int: 1510, Unit: []byte("rpm"), TS: 1760000000123456789, Seq: 42, Epoch: 1760000000000000000},
		{Kind: Int, Int: -12000, Unit: []byte("rpm"), TS: 1, Seq: 1},
		{Kind: Int, Int: math.MinInt64, TS: -5, Seq: math.MaxUint64, Epoch: math.MaxUint64},
		{Kind: Int, Int: math.MaxInt64, TS: math.MaxInt64, Seq: 7},
		{Kind: Uint, Uint: math.MaxUint64, TS: 2, Seq: 3},
		{Kind: Uint, Uint: 1 << 63, TS: 2, Seq: 3},
		{Kind: Float, Float: 21.5, Unit: []byte("°C"), TS: 3, Seq: 4, Flags: OutOfRange},
		{Kind: Float, Float: 12.300000000000001, Unit: []byte("V"), TS: 3, Seq: 4},
		{Kind: Float, Float: 25, TS: 3, Seq: 4},
		{Kind: Float, Float: 1e6, TS: 3, Seq: 4},
		{Kind: Float, Float: -1e-7, TS: 3, Seq: 4},
		{Kind: Float, Float: 5e-324, TS: 3, Seq: 4},
		{Kind: Float, Float: math.MaxFloat64, TS: 3, Seq: 4},
		{Kind: Float, Float: math.Copysign(0, -1), TS: 3, Seq: 4},
		{Kind: Float, Float: math.NaN(), Unit: []byte("m/s^2"), TS: 3, Seq: 4, Flags: Stale},
		{Kind: Float, Float: math.Inf(1), TS: 3, Seq: 4},
		{Kind: Float, Float: math.Inf(-1), TS: 3, Seq: 4, Flags: Stale | OutOfRange},
		{Kind: Int, Int: 3, Label: []byte("Drive"), TS: 9, Seq: 10, Flags: Stale},
		{Kind: Int, Int: 1, Label: []byte(`say "hi"\ now`), Unit: []byte("tab\there\nnl\x01"), TS: 9, Seq: 10},
		{Kind: Int, Int: 1, Label: []byte("bad \xff utf8 ☃"), TS: 9, Seq: 10},
		{Kind: Int, Int: 1, Label: bytes.Repeat([]byte("L"), 300), Unit: bytes.Repeat([]byte("u"), 70000), TS: 9, Seq: 10},
	}
}

// same reports whether two envelopes carry the same values (NaN equal to
// NaN, -0 distinct from +0).
func same(a, b *Envelope) bool {
	if a.Kind != b.Kind || a.Int != b.Int || a.Uint != b.Uint || a.TS != b.TS || a.Seq != b.Seq ||
		a.Epoch != b.Epoch || a.Flags != b.Flags || !bytes.Equal(a.Unit, b.Unit) || !bytes.Equal(a.Label, b.Label) {
		return false
	}
	if math.IsNaN(a.Float) || math.IsNaN(b.Float) {
		return math.IsNaN(a.Float) && math.IsNaN(b.Float)
	}
	return math.Float64bits(a.Float) == math.Float64bits(b.Float)
}

// wantAfterRoundTrip is what Parse must give back for e: strings with
// invalid UTF-8 come back with U+FFFD in JSON.
func wantAfterRoundTrip(e Envelope, enc Encoding) Envelope {
	if enc == JSON {
		e.Label = validUTF8(e.Label)
		e.Unit = validUTF8(e.Unit)
	}
	return e
}

// validUTF8 replaces each byte of invalid UTF-8 with U+FFFD.
func validUTF8(b []byte) []byte {
	var out []byte
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	for _, enc := range []Encoding{JSON, Msgpack} {
		var got Envelope
		for i, e := range samples() {
			b := Append(enc, nil, &e)
			if err := Parse(b, &got); err != nil {
				t.Fatalf("%s sample %d: Parse(%q): %v", enc, i, trim(b), err)
			}
			want := wantAfterRoundTrip(e, enc)
			if !same(&got, &want) {
				t.Errorf("%s sample %d: Parse(%q)\n got %+v\nwant %+v", enc, i, trim(b), got, want)
			}
		}
	}
}

func trim(b []byte) []byte {
	if len(b) > 200 {
		return b[:200]
	}
	return b
}

// jsonRef is the schema as a subscriber would declare it for goccy/go-json.
type jsonRef struct {
	Value     *gojson.Number `json:"value"`
	Nonfinite string         `json:"nonfinite"`
	Unit      string         `json:"unit"`
	Label     string         `json:"label"`
	TS        int64          `json:"ts"`
	Seq       uint64         `json:"seq"`
	Epoch     uint64         `json:"epoch"`
	OOR       bool           `json:"oor"`
	Stale     bool           `json:"stale"`
}

// TestJSONMatchesGoccy checks the JSON output against goccy/go-json: it
// must decode, and to the same values as Parse gives.
func TestJSONMatchesGoccy(t *testing.T) {
	for i, e := range samples() {
		b := AppendJSON(nil, &e)
		if !gojson.Valid(b) {
			t.Fatalf("sample %d: goccy says invalid JSON: %q", i, trim(b))
		}
		var ref jsonRef
		if err := gojson.Unmarshal(b, &ref); err != nil {
			t.Fatalf("sample %d: goccy: %v", i, err)
		}
		want := wantAfterRoundTrip(e, JSON)
		if ref.Unit != string(want.Unit) || ref.Label != string(want.Label) || ref.TS != e.TS || ref.Seq != e.Seq ||
			ref.Epoch != e.Epoch || ref.OOR != e.OutOfRange() || ref.Stale != e.Stale() {
			t.Errorf("sample %d: goccy decoded %+v from %q, want %+v", i, ref, trim(b), e)
		}
		switch {
		case e.Kind == Float && (math.IsNaN(e.Float) || math.IsInf(e.Float, 0)):
			if ref.Value != nil || ref.Nonfinite == "" {
				t.Errorf("sample %d: non-finite %v: got value %v nonfinite %q, want null and a name", i, e.Float, ref.Value, ref.Nonfinite)
			}
		case e.Kind == Float:
			f, err := ref.Value.Float64()
			if err != nil || math.Float64bits(f) != math.Float64bits(e.Float) {
				t.Errorf("sample %d: goccy value %v (%v), want %v", i, f, err, e.Float)
			}
			if !strings.ContainsAny(ref.Value.String(), ".e") {
				t.Errorf("sample %d: float written as %s, which reads back as an integer", i, ref.Value)
			}
		case e.Kind == Int:
			n, err := ref.Value.Int64()
			if err != nil || n != e.Int {
				t.Errorf("sample %d: goccy value %v (%v), want %d", i, ref.Value, err, e.Int)
			}
		case e.Kind == Uint:
			if ref.Value.String() != uintString(e.Uint) {
				t.Errorf("sample %d: goccy value %v, want %d", i, ref.Value, e.Uint)
			}
		}
	}
}

func uintString(u uint64) string {
	var b []byte
	return string(appendUintJSON(b, u))
}

// TestMsgpackMatchesLibrary decodes the MessagePack output with
// vmihailenco/msgpack into a generic map and compares the values.
func TestMsgpackMatchesLibrary(t *testing.T) {
	for i, e := range samples() {
		b := AppendMsgpack(nil, &e)
		var m map[string]any
		if err := msgpack.Unmarshal(b, &m); err != nil {
			t.Fatalf("sample %d: msgpack: %v", i, err)
		}
		check := func(key string, got, want any) {
			t.Helper()
			if g, w := norm(got), norm(want); g != w {
				t.Errorf("sample %d: key %s: got %v (%T), want %v", i, key, got, got, want)
			}
		}
		switch e.Kind {
		case Int:
			check("value", m["value"], e.Int)
		case Uint:
			check("value", m["value"], e.Uint)
		case Float:
			f, ok := m["value"].(float64)
			if !ok || math.Float64bits(f) != math.Float64bits(e.Float) && !(math.IsNaN(f) && math.IsNaN(e.Float)) {
				t.Errorf("sample %d: value %v (%T), want float64 %v", i, m["value"], m["value"], e.Float)
			}
		}
		check("ts", m["ts"], e.TS)
		check("seq", m["seq"], e.Seq)
		check("epoch", m["epoch"], e.Epoch)
		if len(e.Unit) > 0 {
			check("unit", m["unit"], string(e.Unit))
		} else if _, ok := m["unit"]; ok {
			t.Errorf("sample %d: unit present though empty", i)
		}
		if len(e.Label) > 0 {
			check("label", m["label"], string(e.Label))
		}
		if e.OutOfRange() {
			check("oor", m["oor"], true)
		}
		if e.Stale() {
			check("stale", m["stale"], true)
		}
		wantKeys := 4 + btoi(len(e.Unit) > 0) + btoi(len(e.Label) > 0) + btoi(e.OutOfRange()) + btoi(e.Stale())
		if len(m) != wantKeys {
			t.Errorf("sample %d: %d keys %v, want %d", i, len(m), m, wantKeys)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// norm maps the integer types msgpack decodes to a comparable form.
func norm(v any) any {
	switch x := v.(type) {
	case int8:
		return normInt(int64(x))
	case int16:
		return normInt(int64(x))
	case int32:
		return normInt(int64(x))
	case int64:
		return normInt(x)
	case uint8:
		return normUint(uint64(x))
	case uint16:
		return normUint(uint64(x))
	case uint32:
		return normUint(uint64(x))
	case uint64:
		return normUint(x)
	}
	return v
}

type integer struct {
	neg bool
	u   uint64
}

func normInt(i int64) any {
	if i < 0 {
		return integer{true, uint64(-i)}
	}
	return integer{false, uint64(i)}
}

func normUint(u uint64) any { return integer{false, u} }

// TestLibraryOutputParses feeds Parse what the reference libraries
// produce for the same schema (other key order, other integer widths).
func TestLibraryOutputParses(t *testing.T) {
	type ref struct {
		Value float64 `json:"value" msgpack:"value"`
		Unit  string  `json:"unit" msgpack:"unit"`
		TS    int64   `json:"ts" msgpack:"ts"`
		Seq   uint64  `json:"seq" msgpack:"seq"`
		Epoch uint64  `json:"epoch" msgpack:"epoch"`
		Stale bool    `json:"stale" msgpack:"stale"`
		Extra []any   `json:"extra" msgpack:"extra"`
	}
	r := ref{Value: 3.25, Unit: "A", TS: 17, Seq: 5, Epoch: 9, Stale: true, Extra: []any{1, "x", map[string]any{"y": []any{nil, true}}}}
	want := Envelope{Kind: Float, Float: 3.25, Unit: []byte("A"), TS: 17, Seq: 5, Epoch: 9, Flags: Stale}
	jb, err := gojson.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := msgpack.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]byte{jb, mb} {
		var got Envelope
		if err := Parse(b, &got); err != nil {
			t.Fatalf("Parse(%q): %v", b, err)
		}
		if !same(&got, &want) {
			t.Errorf("Parse(%q) = %+v, want %+v", b, got, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in      string
		wantKey string
		wantMsg string
	}{
		{``, "", "want '{'"},
		{`[]`, "", "want '{'"},
		{`{"value":1,"ts":2}`, "seq", "missing"},
		{`{"ts":2,"seq":3}`, "value", "missing"},
		{`{"value":1,"seq":3}`, "ts", "missing"},
		{`{"value":"x","ts":2,"seq":3}`, "value", "want a number"},
		{`{"value":1.,"ts":2,"seq":3}`, "value", "digit after '.'"},
		{`{"value":1,"ts":2.5,"seq":3}`, "ts", "want an integer"},
		{`{"value":1,"ts":2,"seq":-3}`, "seq", "unsigned"},
		{`{"value":1,"ts":99999999999999999999,"seq":3}`, "ts", "int64"},
		{`{"value":null,"ts":2,"seq":3}`, "value", "null without"},
		{`{"value":1,"nonfinite":"NaN","ts":2,"seq":3}`, "nonfinite", "numeric"},
		{`{"value":null,"nonfinite":"nan","ts":2,"seq":3}`, "nonfinite", "want \"NaN\""},
		{`{"value":1,"ts":2,"seq":3,"oor":1}`, "oor", "true or false"},
		{`{"value":1,"ts":2,"seq":3,"unit":"a`, "unit", "unterminated"},
		{`{"value":1,"ts":2,"seq":3,"unit":"\q"}`, "unit", "bad escape"},
		{`{"value":1,"ts":2,"seq":3} x`, "", "after the envelope"},
		{`{"value":1 "ts":2}`, "", "want ',' or '}'"},
		{`{"value":1,"x":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],"ts":2,"seq":3}`, "", "nested deeper"},
		{"\x84\xa5value\x01", "", "end of input"},
		{"\x83\xa5value\xa1x\xa2ts\x01\xa3seq\x01", "value", "want a number"},
		{"\x83\xa5value\x01\xa2ts\x01\xa3seq\xff", "seq", "unsigned"},
		{"\x82\xa5value\x01\xa2ts\x01", "seq", "missing"},
		{"\x83\xa5value\x01\xa2ts\x01\xa3seq\x01\x00", "", "after the envelope"},
		{"\x84\xa5value\x01\xa2ts\x01\xa3seq\x01\xa1x\xdb\xff\xff\xff\xff", "", "runs past the end"},
	}
	for _, tt := range tests {
		var e Envelope
		err := Parse([]byte(tt.in), &e)
		var se *SyntaxError
		if !errors.As(err, &se) || !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) = %v, want a *SyntaxError", tt.in, err)
			continue
		}
		if se.Key != tt.wantKey || !strings.Contains(se.Msg, tt.wantMsg) {
			t.Errorf("Parse(%q) = key %q msg %q, want key %q msg containing %q", tt.in, se.Key, se.Msg, tt.wantKey, tt.wantMsg)
		}
	}
}

func TestParseAcceptsJSONVariants(t *testing.T) {
	tests := []struct {
		in   string
		want Envelope
	}{
		{" \n{ \"seq\" : 3 , \"ts\" : 2 , \"value\" : -0 }\t", Envelope{Kind: Int, TS: 2, Seq: 3}},
		{`{"value":1E2,"ts":2,"seq":3}`, Envelope{Kind: Float, Float: 100, TS: 2, Seq: 3}},
		{`{"value":18446744073709551616,"ts":2,"seq":3}`, Envelope{Kind: Float, Float: 18446744073709551616, TS: 2, Seq: 3}},
		{`{"value":-9223372036854775808,"ts":2,"seq":3}`, Envelope{Kind: Int, Int: math.MinInt64, TS: 2, Seq: 3}},
		{`{"value":1e999,"ts":2,"seq":3}`, Envelope{Kind: Float, Float: math.Inf(1), TS: 2, Seq: 3}},
		{`{"value":1,"ts":2,"seq":3,"unit":"\u00b0C \ud83d\ude00 \/"}`, Envelope{Kind: Int, Int: 1, TS: 2, Seq: 3, Unit: []byte("°C 😀 /")}},
		{`{"value":1,"ts":2,"seq":3,"stale":true,"stale":false,"oor":true}`, Envelope{Kind: Int, Int: 1, TS: 2, Seq: 3, Flags: OutOfRange}},
		{`{"value":null,"nonfinite":"-Inf","ts":2,"seq":3}`, Envelope{Kind: Float, Float: math.Inf(-1), TS: 2, Seq: 3}},
		{`{"value":1,"ts":2,"seq":3,"future":{"a":[1,2.5,"s",true,false,null,{}]}}`, Envelope{Kind: Int, Int: 1, TS: 2, Seq: 3}},
	}
	for _, tt := range tests {
		var got Envelope
		if err := Parse([]byte(tt.in), &got); err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if !same(&got, &tt.want) {
			t.Errorf("Parse(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

// TestParseUnitAliasesPayload pins the documented aliasing: without
// escapes, Unit is a sub-slice of the payload, not a copy.
func TestParseUnitAliasesPayload(t *testing.T) {
	e := samples()[0]
	b := AppendJSON(nil, &e)
	var got Envelope
	if err := Parse(b, &got); err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte("rpm"))
	b[i] = 'X'
	if string(got.Unit) != "Xpm" {
		t.Errorf("Unit = %q after changing the payload, want it to alias the payload (%q)", got.Unit, "Xpm")
	}
}

func TestEncodingNames(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Encoding
	}{{"json", JSON}, {"msgpack", Msgpack}, {"application/json", JSON}, {"application/msgpack", Msgpack}} {
		got, err := ParseEncoding(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseEncoding(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
		if got.String() != tt.in && got.ContentType() != tt.in {
			t.Errorf("%v names neither %q", got, tt.in)
		}
	}
	if _, err := ParseEncoding("xml"); !errors.Is(err, ErrEncoding) {
		t.Errorf("ParseEncoding(xml) = %v, want ErrEncoding", err)
	}
}

// TestAppendJSONString pins the rule for text from a DBC: valid JSON
// that carries no control character, invalid UTF-8 as U+FFFD, other
// text as it is.
func TestAppendJSONString(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"km/h", `"km/h"`},
		{"°C", `"°C"`},
		{"a\"b\\c", `"a\"b\\c"`},
		{"\x1b]0;x\x07", `"\u001b]0;x\u0007"`},
		{"\n\r\t", `"\n\r\t"`},
		{"\x7f", `"\u007f"`},
		{"\u009b2J", `"\u009b2J"`},
		{"a\u2028b\u2029", `"a\u2028b\u2029"`},
		{"can\xff", `"can\ufffd"`},
		{"\xe2\x82", `"\ufffd\ufffd"`},
		{"\ufffd", "\"\ufffd\""},
		{"", `""`},
	} {
		got := string(AppendJSONString(nil, tt.in))
		if got != tt.want {
			t.Errorf("AppendJSONString(%q): got %s, want %s", tt.in, got, tt.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("AppendJSONString(%q) = %s: not valid JSON", tt.in, got)
		}
		buf := make([]byte, 0, 64)
		if n := testing.AllocsPerRun(10, func() { AppendJSONString(buf, tt.in) }); n != 0 {
			t.Errorf("AppendJSONString(%q): %v allocations, want 0", tt.in, n)
		}
	}
}

// TestEncodingsAgree: the same map of keys, written by the reference
// libraries in JSON and in MessagePack, gets the same verdict from Parse:
// the same value, or a refusal naming the same key. Each row tries one
// key of the schema, so a key one parser reads and the other skips (as
// MessagePack once skipped "nonfinite") fails here.
func TestEncodingsAgree(t *testing.T) {
	base := func(kv ...any) map[string]any {
		m := map[string]any{"value": 1.5, "ts": int64(7), "seq": uint64(3)}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "(absent)" {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		return m
	}
	for _, tc := range []struct {
		name    string
		doc     map[string]any
		wantKey string // "" when it parses
	}{
		{"typical", base("unit", "A", "epoch", uint64(9)), ""},
		{"integer, label, flags", base("value", int64(-4), "label", "Off", "oor", true, "stale", false), ""},
		{"NaN", base("value", nil, "nonfinite", "NaN"), ""},
		{"+Inf", base("value", nil, "nonfinite", "+Inf"), ""},
		{"Inf", base("value", nil, "nonfinite", "Inf"), ""},
		{"-Inf", base("value", nil, "nonfinite", "-Inf"), ""},
		{"unknown key", base("extra", map[string]any{"x": []any{1, "y"}}), ""},
		{"null without nonfinite", base("value", nil), "value"},
		{"nonfinite with a number", base("nonfinite", "NaN"), "nonfinite"},
		{"nonfinite names nothing", base("value", nil, "nonfinite", "nan"), "nonfinite"},
		{"nonfinite not text", base("value", nil, "nonfinite", 1), "nonfinite"},
		{"value not a number", base("value", "x"), "value"},
		{"no value", base("value", "(absent)"), "value"},
		{"no ts", base("ts", "(absent)"), "ts"},
		{"no seq", base("seq", "(absent)"), "seq"},
		{"ts not an integer", base("ts", 2.5), "ts"},
		{"seq negative", base("seq", int64(-3)), "seq"},
		{"epoch negative", base("epoch", int64(-3)), "epoch"},
		{"oor not a flag", base("oor", 1), "oor"},
		{"stale not a flag", base("stale", "yes"), "stale"},
		{"unit not text", base("unit", 5), "unit"},
		{"label not text", base("label", true), "label"},
	} {
		jb, err := gojson.Marshal(tc.doc)
		if err != nil {
			t.Fatal(err)
		}
		mb, err := msgpack.Marshal(tc.doc)
		if err != nil {
			t.Fatal(err)
		}
		var got [2]Envelope
		for i, b := range [][]byte{jb, mb} {
			err := Parse(b, &got[i])
			var se *SyntaxError
			switch {
			case tc.wantKey == "" && err != nil:
				t.Errorf("%s: Parse(%q): %v, want it to parse", tc.name, b, err)
			case tc.wantKey != "" && (!errors.As(err, &se) || se.Key != tc.wantKey):
				t.Errorf("%s: Parse(%q) = %v, want a refusal of key %q", tc.name, b, err, tc.wantKey)
			}
		}
		if tc.wantKey == "" && !same(&got[0], &got[1]) {
			t.Errorf("%s: JSON gives %+v, MessagePack %+v", tc.name, got[0], got[1])
		}
	}
}
