package envelope

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	gojson "github.com/goccy/go-json"
	"github.com/vmihailenco/msgpack/v5"
)

func TestWindowRoundTrip(t *testing.T) {
	ss := samples()
	topics := []string{"yukart/vehicle/MOT_Speed", `odd "topic" \ é`, "t"}
	for _, enc := range []Encoding{JSON, Msgpack} {
		w := NewWindowEncoder(enc)
		var got Window
		for n := range []int{0, 1, 3, len(ss)} {
			w.Reset(100, 110)
			for i := range n {
				if i%2 == 0 {
					w.Add(topics[i%len(topics)], &ss[i])
				} else {
					w.AddEncoded(topics[i%len(topics)], Append(enc, nil, &ss[i]))
				}
			}
			if w.Len() != n {
				t.Fatalf("Len = %d, want %d", w.Len(), n)
			}
			b := w.Append(nil, uint64(n+1), 77)
			if err := ParseWindow(b, &got); err != nil {
				t.Fatalf("%s window of %d: %v\n%q", enc, n, err, trim(b))
			}
			if got.Seq != uint64(n+1) || got.Epoch != 77 || got.Start != 100 || got.End != 110 || len(got.Items) != n {
				t.Fatalf("%s window of %d: got seq %d epoch %d [%d, %d) %d items", enc, n, got.Seq, got.Epoch, got.Start, got.End, len(got.Items))
			}
			for i := range n {
				it := &got.Items[i]
				want := wantAfterRoundTrip(ss[i], enc)
				if string(it.Topic) != topics[i%len(topics)] || !same(&it.Envelope, &want) {
					t.Errorf("%s item %d: %q %+v, want %q %+v", enc, i, it.Topic, it.Envelope, topics[i%len(topics)], want)
				}
			}
		}
	}
}

// TestWindowMatchesLibraries decodes windows with the reference
// libraries into the documented generic shape.
func TestWindowMatchesLibraries(t *testing.T) {
	type win struct {
		Seq   uint64  `json:"seq" msgpack:"seq"`
		Epoch uint64  `json:"epoch" msgpack:"epoch"`
		Start int64   `json:"start" msgpack:"start"`
		End   int64   `json:"end" msgpack:"end"`
		Items [][]any `json:"items" msgpack:"items"`
	}
	for _, enc := range []Encoding{JSON, Msgpack} {
		w := NewWindowEncoder(enc)
		w.Reset(10, 20)
		w.Add("a", &typical)
		w.Add("b", &labelled)
		b := w.Append(nil, 3, 4)
		var got win
		var err error
		if enc == JSON {
			err = gojson.Unmarshal(b, &got)
		} else {
			err = msgpack.Unmarshal(b, &got)
		}
		if err != nil {
			t.Fatalf("%s: %v", enc, err)
		}
		if got.Seq != 3 || got.Epoch != 4 || got.Start != 10 || got.End != 20 || len(got.Items) != 2 {
			t.Fatalf("%s: %+v", enc, got)
		}
		if got.Items[1][0] != "b" {
			t.Errorf("%s: item topic %v, want b", enc, got.Items[1][0])
		}
		m, ok := got.Items[1][1].(map[string]any)
		if !ok || m["label"] != "Drive" || m["stale"] != true {
			t.Errorf("%s: item envelope %#v, want label Drive and stale", enc, got.Items[1][1])
		}
	}
}

func TestParseWindowErrors(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"seq":1}`, "items"},
		{`{"items":[]}`, "seq"},
		{`{"seq":1,"items":[["t"]]}`, "want ','"},
		{`{"seq":1,"items":[["t",{"value":1,"ts":1,"seq":1},3]]}`, "want ']'"},
		{`{"seq":1,"items":{}}`, "want '['"},
		{"\x82\xa3seq\x01\xa5items\x91\x91\xa1t", "want [topic, envelope]"},
	} {
		var w Window
		err := ParseWindow([]byte(tt.in), &w)
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseWindow(%q) = %v, want an error about %q", tt.in, err, tt.want)
		}
	}
}

func TestParseWindowReusesItems(t *testing.T) {
	w := NewWindowEncoder(JSON)
	w.Reset(0, 1)
	w.Add(`esc\aped`, &labelled) // topic unescaped into the item's scratch
	w.Add("plain", &typical)
	b := w.Append(nil, 1, 1)
	var got Window
	for range 3 {
		if err := ParseWindow(b, &got); err != nil {
			t.Fatal(err)
		}
	}
	if len(got.Items) != 2 || string(got.Items[0].Topic) != `esc\aped` || !bytes.Equal(got.Items[0].Envelope.Label, labelled.Label) {
		t.Errorf("after reuse: %d items, first %q %q", len(got.Items), got.Items[0].Topic, got.Items[0].Envelope.Label)
	}
}

// TestWindowPolicy: a window carries the policy version it was set,
// reads back in both encodings and with the reference libraries, and a
// window without one reads as 0 into a Window that held one.
func TestWindowPolicy(t *testing.T) {
	ss := samples()
	for _, enc := range []Encoding{JSON, Msgpack} {
		w := NewWindowEncoder(enc)
		var got Window
		for _, version := range []uint64{7, 0, 1 << 63, 0} {
			w.SetPolicy(version)
			w.Reset(100, 110)
			w.Add("t", &ss[0])
			b := w.Append(nil, 1, 77)
			if err := ParseWindow(b, &got); err != nil {
				t.Fatalf("%s: %v\n%q", enc, err, trim(b))
			}
			if got.Policy != version || len(got.Items) != 1 {
				t.Errorf("%s: policy %d, %d items; want %d, 1", enc, got.Policy, len(got.Items), version)
			}
			var generic map[string]any
			if enc == JSON {
				err := gojson.Unmarshal(b, &generic)
				if err != nil {
					t.Fatal(err)
				}
			} else if err := msgpack.Unmarshal(b, &generic); err != nil {
				t.Fatal(err)
			}
			if _, has := generic["policy"]; has != (version != 0) {
				t.Errorf("%s version %d: key policy present %v", enc, version, has)
			}
		}
	}
}
