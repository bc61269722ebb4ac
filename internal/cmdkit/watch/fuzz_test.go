package watch

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/eclipse/paho.golang/paho"

	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/rawbatch"
)

// FuzzPublish feeds any two payloads on any topic, the first retained or
// not, through Publish, the function `candec watch` calls for every
// message. It must not panic; the table and summary must be UTF-8 with
// no control character but line ends, with the last value cut to
// MaxLast characters; the JSON summary valid; and the counters add up:
// every message counted once, loss within the seq bound, no more
// latency samples than items, implausible messages no more than
// messages.
func FuzzPublish(f *testing.F) {
	ts := t0.UnixNano()
	e := envelope.Envelope{TS: ts, Seq: 1, Epoch: 1, Unit: []byte("°C"), Label: []byte("\x1b]0;x\x07")}
	e.SetFloat(21.5)
	first := envelope.AppendJSON(nil, &e)
	e.Seq, e.Flags = 1<<63, envelope.Stale
	f.Add("v/a", first, envelope.AppendJSON(nil, &e), false)
	e.Seq, e.TS, e.Flags = 2, -1, 0
	f.Add("v/a", envelope.AppendMsgpack(nil, &e), first, true)
	w := envelope.NewWindowEncoder(envelope.JSON)
	w.Reset(ts, ts+1e7)
	w.Add("v/\x1b", &e)
	f.Add("win", w.Append(nil, 1, 1), w.Append(nil, 0, 1), false)
	raw1, _ := rawbatch.AppendBatch(nil, 0, []frame.Frame{{Time: ts, ID: 1, Len: 1}})
	raw2, _ := rawbatch.AppendBatch(nil, 1<<64-1, []frame.Frame{{Time: -ts, ID: 2, Len: 1}})
	f.Add("can/raw", raw1, raw2, false)
	f.Add("status\x9b", []byte("\x1b[2Jonline"), []byte("offline"), true)
	f.Fuzz(func(t *testing.T, topic string, p1, p2 []byte, retain bool) {
		m := New(Config{})
		m.Publish(&paho.Publish{Topic: topic, Payload: p1, Retain: retain}, t0)
		m.Publish(&paho.Publish{Topic: topic, Payload: p2}, t0.Add(time.Millisecond))
		now := t0.Add(time.Second)
		s := m.Summary(now)

		if got := s.Messages + s.Retained; got != 2 {
			t.Errorf("messages %d + retained %d = %d, want 2", s.Messages, s.Retained, got)
		}
		if s.Lost > 2*MaxSeq {
			t.Errorf("lost %d, beyond the seq bound", s.Lost)
		}
		var implausible uint64
		for _, n := range s.Implausible {
			implausible += n
		}
		if implausible > 2 {
			t.Errorf("implausible %v, more than the 2 messages", s.Implausible)
		}
		var items uint64
		for _, st := range s.TopicStats {
			items += st.Items
			if n := utf8.RuneCountInString(st.Last); n > MaxLast {
				t.Errorf("last value of %d characters: %.200q", n, st.Last)
			}
		}
		if s.Latency.N+s.Ahead > max(items, 2) {
			t.Errorf("%d latency samples and %d ahead for %d items", s.Latency.N, s.Ahead, items)
		}
		var buf bytes.Buffer
		if err := WriteTable(&buf, s.TopicStats); err != nil {
			t.Fatal(err)
		}
		if err := WriteTableFit(&buf, s.TopicStats, 80, 10); err != nil {
			t.Fatal(err)
		}
		if err := WriteSummary(&buf, s, m.Histogram()); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if !utf8.ValidString(out) {
			t.Errorf("output is not UTF-8: %.300q", out)
		}
		for _, r := range out {
			if r != '\n' && (r < 0x20 || r >= 0x7f && r <= 0x9f) {
				t.Fatalf("output holds %U: %.300q", r, out)
			}
		}
		if strings.Contains(out, "lost -") {
			t.Errorf("a negative loss: %.300q", out)
		}
		j, err := json.Marshal(s)
		if err != nil || !json.Valid(j) {
			t.Errorf("summary as JSON: %v", err)
		}
	})
}
