package envelope

import "testing"

func TestTracker(t *testing.T) {
	type in struct {
		topic      string
		epoch, seq uint64
	}
	type out struct {
		first, dup, restart bool
		lost                uint64
	}
	tests := []struct {
		name string
		in   []in
		want []out
		tot  TopicStats
	}{
		{
			name: "consecutive, joined late",
			in:   []in{{"a", 1, 5}, {"a", 1, 6}, {"a", 1, 7}},
			want: []out{{first: true}, {}, {}},
			tot:  TopicStats{Received: 3},
		},
		{
			name: "gap counts each missing envelope",
			in:   []in{{"a", 1, 1}, {"a", 1, 2}, {"a", 1, 5}, {"a", 1, 6}},
			want: []out{{first: true}, {}, {lost: 2}, {}},
			tot:  TopicStats{Received: 4, Lost: 2},
		},
		{
			name: "same seq again is a duplicate (retained redelivery), and older too",
			in:   []in{{"a", 1, 3}, {"a", 1, 3}, {"a", 1, 2}, {"a", 1, 4}},
			want: []out{{first: true}, {dup: true}, {dup: true}, {}},
			tot:  TopicStats{Received: 4, Duplicates: 2},
		},
		{
			name: "new epoch is a restart, not loss",
			in:   []in{{"a", 1, 900}, {"a", 2, 1}, {"a", 2, 2}},
			want: []out{{first: true}, {restart: true}, {}},
			tot:  TopicStats{Received: 3, Restarts: 1},
		},
		{
			name: "restart whose first envelopes were lost",
			in:   []in{{"a", 1, 900}, {"a", 2, 4}},
			want: []out{{first: true}, {restart: true, lost: 3}},
			tot:  TopicStats{Received: 2, Restarts: 1, Lost: 3},
		},
		{
			name: "without epochs, seq going back is a restart",
			in:   []in{{"a", 0, 50}, {"a", 0, 1}, {"a", 0, 2}, {"a", 0, 2}},
			want: []out{{first: true}, {restart: true}, {}, {dup: true}},
			tot:  TopicStats{Received: 4, Restarts: 1, Duplicates: 1},
		},
		{
			name: "topics are independent",
			in:   []in{{"a", 1, 1}, {"b", 1, 7}, {"a", 1, 3}, {"b", 1, 8}},
			want: []out{{first: true}, {first: true}, {lost: 1}, {}},
			tot:  TopicStats{Received: 4, Lost: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := NewTracker()
			for i, x := range tt.in {
				e := Envelope{Epoch: x.epoch, Seq: x.seq}
				var o Observation
				if i%2 == 0 {
					o = tr.Observe(x.topic, &e)
				} else {
					o = tr.ObserveBytes([]byte(x.topic), &e)
				}
				w := tt.want[i]
				if o.First != w.first || o.Duplicate != w.dup || o.Restart != w.restart || o.Lost != w.lost {
					t.Errorf("envelope %d (%s epoch %d seq %d): got %+v, want %+v", i, x.topic, x.epoch, x.seq, o, w)
				}
			}
			if got := tr.Totals(); got != tt.tot {
				t.Errorf("Totals = %+v, want %+v", got, tt.tot)
			}
		})
	}
}

func TestTrackerTopic(t *testing.T) {
	var tr Tracker // the zero value works
	tr.Observe("a", &Envelope{Epoch: 3, Seq: 1})
	tr.Observe("a", &Envelope{Epoch: 3, Seq: 4})
	got, ok := tr.Topic("a")
	want := TopicStats{Received: 2, Lost: 2, Epoch: 3, Seq: 4}
	if !ok || got != want {
		t.Errorf("Topic(a) = %+v, %v; want %+v", got, ok, want)
	}
	if _, ok := tr.Topic("b"); ok {
		t.Error("Topic(b) found, want not seen")
	}
	if tr.Topics() != 1 {
		t.Errorf("Topics = %d, want 1", tr.Topics())
	}
	tr.Reset()
	if tr.Topics() != 0 || tr.Totals() != (TopicStats{}) {
		t.Error("Reset left state behind")
	}
}
