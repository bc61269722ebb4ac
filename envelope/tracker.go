package envelope

// Tracker counts, per topic, the envelopes a subscriber received, lost
// (gaps in seq), received twice, and the publisher restarts it saw. It
// allocates only when it first sees a topic. A Tracker is not safe for
// concurrent use.
type Tracker struct {
	topics map[string]*topicState
	total  TopicStats
}

// TopicStats are the counters of one topic, or of all topics together.
type TopicStats struct {
	// Received counts every envelope observed.
	Received uint64
	// Lost counts envelopes missing from gaps in seq.
	Lost uint64
	// Duplicates counts envelopes whose seq was not new in their epoch
	// (a retained message redelivered, or a QoS 1 resend).
	Duplicates uint64
	// Restarts counts publisher restarts: a new epoch, or seq going back
	// when the publisher sets no epoch (epoch 0).
	Restarts uint64
	// Epoch and Seq are the newest envelope's.
	Epoch, Seq uint64
}

type topicState struct{ TopicStats }

// Observation is what one envelope told the tracker.
type Observation struct {
	// First is true for the first envelope of a topic: nothing before it
	// counts as lost (a subscriber joins at any point).
	First bool
	// Lost is the number of envelopes missing just before this one.
	Lost uint64
	// Duplicate is true when this envelope's seq is not new.
	Duplicate bool
	// Restart is true when this envelope starts a new publisher run.
	Restart bool
}

// NewTracker returns an empty tracker.
func NewTracker() *Tracker { return &Tracker{topics: map[string]*topicState{}} }

// Observe records an envelope received on topic.
func (t *Tracker) Observe(topic string, e *Envelope) Observation {
	st := t.topics[topic]
	if st == nil {
		st = t.add(topic)
	}
	return t.observe(st, e)
}

// ObserveBytes is Observe for a topic held in a byte slice, as in a
// parsed window; it does not allocate for a topic already seen.
func (t *Tracker) ObserveBytes(topic []byte, e *Envelope) Observation {
	st := t.topics[string(topic)]
	if st == nil {
		st = t.add(string(topic))
	}
	return t.observe(st, e)
}

func (t *Tracker) add(topic string) *topicState {
	if t.topics == nil {
		t.topics = map[string]*topicState{}
	}
	st := &topicState{}
	t.topics[topic] = st
	return st
}

func (t *Tracker) observe(st *topicState, e *Envelope) Observation {
	var o Observation
	switch {
	case st.Received == 0:
		o.First = true
	case e.Epoch != st.Epoch || (e.Epoch == 0 && e.Seq < st.Seq):
		o.Restart = true
		// A run starts at seq 1: anything before the first one seen
		// in the new run is lost.
		if e.Seq > 1 {
			o.Lost = e.Seq - 1
		}
	case e.Seq <= st.Seq:
		o.Duplicate = true
	default:
		o.Lost = e.Seq - st.Seq - 1
	}
	st.Received++
	t.total.Received++
	st.Lost += o.Lost
	t.total.Lost += o.Lost
	if o.Duplicate {
		st.Duplicates++
		t.total.Duplicates++
		return o
	}
	if o.Restart {
		st.Restarts++
		t.total.Restarts++
	}
	st.Epoch, st.Seq = e.Epoch, e.Seq
	return o
}

// Topic returns the counters of one topic.
func (t *Tracker) Topic(topic string) (TopicStats, bool) {
	st, ok := t.topics[topic]
	if !ok {
		return TopicStats{}, false
	}
	return st.TopicStats, true
}

// Totals returns the counters summed over all topics; Epoch and Seq are
// zero.
func (t *Tracker) Totals() TopicStats { return t.total }

// Topics returns the number of topics seen.
func (t *Tracker) Topics() int { return len(t.topics) }

// Reset forgets every topic and counter.
func (t *Tracker) Reset() {
	clear(t.topics)
	t.total = TopicStats{}
}
