package benchmarks

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/yukart/candec/benchmarks/scenario"
	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/pipeline"
)

// signalSet is what the bench knows of the decoder's topics for a
// scenario.
type signalSet struct {
	// topics are the published signals' topics under the default
	// template.
	topics []string
	// heartbeat holds the topics whose policy has a heartbeat.
	heartbeat map[string]bool
	// period holds the cyclic topics and the period at which the decoder
	// publishes each at the load's speed (periods); nil for a flood,
	// which has no cycle.
	period map[string]time.Duration
}

// signalTopics resolves, the way the decoder does, each published
// signal's topic under the default topic template, which of them have a
// heartbeat in the scenario's policy, and the period of each cyclic one.
func signalTopics(sc scenario.Run) (signalSet, error) {
	db, err := dbc.Load(sc.DBC.File)
	if err != nil {
		return signalSet{}, fmt.Errorf("bench: %w", err)
	}
	pol := pipeline.DefaultPolicy()
	if sc.Policy.File != "" {
		if pol, err = pipeline.LoadPolicy(sc.Policy.File); err != nil {
			return signalSet{}, fmt.Errorf("bench: %w", err)
		}
	}
	e, err := pipeline.New(db, pipeline.Config{Policies: pol}, pipeline.SinkFunc(func(*pipeline.Out) {}))
	if err != nil {
		return signalSet{}, fmt.Errorf("bench: %w", err)
	}
	set := signalSet{topics: e.Topics(), heartbeat: map[string]bool{}}
	var published []*dbc.Signal
	for _, s := range db.Signals {
		if e.Policy(s).Publish {
			published = append(published, s)
		}
	}
	if len(published) != len(set.topics) {
		return signalSet{}, fmt.Errorf("bench: %d published signals but %d topics", len(published), len(set.topics))
	}
	cyclic := map[string]bool{}
	for i, s := range published {
		p := e.Policy(s)
		if p.Heartbeat > 0 {
			set.heartbeat[set.topics[i]] = true
		}
		if !p.OnChange && p.Heartbeat == 0 {
			cyclic[set.topics[i]] = true
		}
	}
	if sc.Load.Flood || sc.Load.Speed <= 0 {
		return set, nil
	}
	set.period, err = periods(db, pol, cyclic, sc.Capture, sc.Load.Speed)
	return set, err
}

// periods runs the decoder's engine over the capture at speed times its
// rate, as the replay plays it, and returns for each cyclic topic (a
// signal published neither on change nor with a heartbeat) the median
// interval between the frame timestamps of its envelopes: the period at
// which the decoder publishes it. See docs: why not GenMsgCycleTime.
func periods(db *dbc.Database, pol *pipeline.PolicyFile, cyclic map[string]bool, capturePath string, speed float64) (map[string]time.Duration, error) {
	last := map[string]int64{}
	intervals := map[string][]int64{}
	e, err := pipeline.New(db, pipeline.Config{Policies: pol}, pipeline.SinkFunc(func(o *pipeline.Out) {
		if o.Env == nil || o.Env.Stale() || !cyclic[o.Topic] {
			return
		}
		if t, ok := last[o.Topic]; ok && o.TS > t {
			intervals[o.Topic] = append(intervals[o.Topic], o.TS-t)
		}
		last[o.Topic] = o.TS
	}))
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	c, err := capture.Open(capturePath, capture.Options{})
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	defer c.Close()
	var f frame.Frame
	var t0 int64
	for n := 0; ; n++ {
		err := c.Next(&f)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("bench: periods from %s: %w", capturePath, err)
		}
		if n == 0 {
			t0 = f.Time
		}
		f.Time = t0 + int64(float64(f.Time-t0)/speed)
		e.Frame(&f)
	}
	out := make(map[string]time.Duration, len(intervals))
	for topic, iv := range intervals {
		slices.Sort(iv)
		out[topic] = time.Duration(iv[len(iv)/2])
	}
	return out, nil
}
