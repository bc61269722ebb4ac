package watch

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/envelope"
)

// envelopeAt is an envelope payload of seq at ts.
func envelopeAt(seq uint64, ts time.Time) []byte {
	e := envelope.Envelope{TS: ts.UnixNano(), Seq: seq, Epoch: 1}
	e.SetFloat(float64(seq))
	return envelope.AppendJSON(nil, &e)
}

// TestMaxTopics: a Monitor follows MaxTopics topics and MaxTopics
// window item topics at most; a message on a topic beyond the bound,
// and a window item on an item topic beyond it, is counted, shown in
// the summary, and moves nothing else.
func TestMaxTopics(t *testing.T) {
	m := New(Config{MaxTopics: 3})
	now := t0
	for i := range 5 {
		m.Observe("v/"+strconv.Itoa(i), envelopeAt(1, now), now)
	}
	m.Observe("v/4", envelopeAt(2, now), now) // untracked, again
	m.Observe("v/0", envelopeAt(2, now), now) // tracked
	w := envelope.NewWindowEncoder(envelope.JSON)
	for i := range 5 {
		e := envelope.Envelope{TS: now.UnixNano(), Seq: 1, Epoch: 1}
		e.SetFloat(1)
		w.Add("item/"+strconv.Itoa(i), &e)
	}
	// The window topic is a fourth topic: beyond the bound.
	m.Observe("w/kart", w.Append(nil, 1, 1), now)
	m2 := New(Config{MaxTopics: 3})
	m2.Observe("w/kart", w.Append(nil, 1, 1), now)
	s, s2 := m.Summary(now), m2.Summary(now)
	if s.Topics != 3 || s.Messages != 4 || s.Untracked != 4 || s.UntrackedItems != 0 {
		t.Errorf("got %d topics, %d messages, %d untracked, %d untracked items; want 3, 4, 4, 0", s.Topics, s.Messages, s.Untracked, s.UntrackedItems)
	}
	if s2.Topics != 1 || s2.UntrackedItems != 2 {
		t.Errorf("window: got %d topics, %d untracked items; want 1, 2 (3 of 5 item topics followed)", s2.Topics, s2.UntrackedItems)
	}
	var out bytes.Buffer
	if err := WriteSummary(&out, s, m.Histogram()); err != nil {
		t.Fatal(err)
	}
	if want := "not followed, over the bound of 3 topics (--max-topics): 4 messages on new topics, 0 window items on new item topics"; !strings.Contains(out.String(), want) {
		t.Errorf("the summary lacks %q:\n%s", want, out.String())
	}
	if New(Config{}).cfg.MaxTopics != DefaultMaxTopics {
		t.Error("the default bound is not DefaultMaxTopics")
	}
}

// BenchmarkObserveTopics reports the heap a Monitor holds after
// 100,000 envelopes on as many distinct topics, with the default bound
// and without one (the bound set above the topics):
//
//	go test -run '^$' -bench ObserveTopics -benchtime 1x ./internal/cmdkit/watch/
func BenchmarkObserveTopics(b *testing.B) {
	const topics = 100_000
	names := make([]string, topics)
	for i := range names {
		names[i] = "yukart/vehicle/S" + strconv.Itoa(i)
	}
	payload := envelopeAt(1, t0)
	for _, c := range []struct {
		name string
		max  int
	}{{"bounded", 0}, {"unbounded", 2 * topics}} {
		b.Run(c.name, func(b *testing.B) {
			var heap float64
			for range b.N {
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				m := New(Config{MaxTopics: c.max})
				for _, n := range names {
					m.Observe(n, payload, t0)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				heap = float64(int64(after.HeapAlloc) - int64(before.HeapAlloc))
				runtime.KeepAlive(m)
			}
			b.ReportMetric(heap/1e6, "MB-heap")
			b.ReportMetric(heap/topics, "B/topic")
		})
	}
}
