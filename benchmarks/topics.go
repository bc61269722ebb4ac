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
	"github.com/yukart/candec/internal/jitter"
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
	// publishes each at the load's speed (jitter.Period); nil for a
	// flood, which has no cycle.
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
	for i, s := range published {
		if e.Policy(s).Heartbeat > 0 {
			set.heartbeat[set.topics[i]] = true
		}
	}
	if sc.Load.Flood || sc.Load.Speed <= 0 {
		return set, nil
	}
	set.period, err = periods(published, set.topics, e.Policy, sc.Capture, sc.Load.Speed)
	return set, err
}

// periods returns the period of each cyclic topic: a signal published
// neither on change nor with a heartbeat, whose message has a cycle
// (GenMsgCycleTime, else the median interval of its frames in the
// capture), at speed times the capture's rate.
func periods(published []*dbc.Signal, topics []string, policy func(*dbc.Signal) pipeline.Policy, capturePath string, speed float64) (map[string]time.Duration, error) {
	var observed map[dbc.Key]time.Duration
	out := map[string]time.Duration{}
	for i, s := range published {
		p := policy(s)
		if p.OnChange || p.Heartbeat > 0 {
			continue
		}
		cycle := s.Message.CycleTime
		if cycle <= 0 {
			if observed == nil {
				var err error
				if observed, err = captureCycles(capturePath); err != nil {
					return nil, err
				}
			}
			cycle = observed[dbc.Key{ID: s.Message.ID, Extended: s.Message.Extended}]
		}
		var capInterval time.Duration
		if p.MaxRate > 0 {
			capInterval = time.Duration(float64(time.Second) / p.MaxRate)
		}
		if period := jitter.Period(capInterval, time.Duration(float64(cycle)/speed)); period > 0 {
			out[topics[i]] = period
		}
	}
	return out, nil
}

// captureCycles returns each message's median interval between frames in
// the capture at path, at the capture's own rate.
func captureCycles(path string) (map[dbc.Key]time.Duration, error) {
	c, err := capture.Open(path, capture.Options{})
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	defer c.Close()
	last := map[dbc.Key]int64{}
	intervals := map[dbc.Key][]int64{}
	var f frame.Frame
	for {
		err := c.Next(&f)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("bench: cycles of %s: %w", path, err)
		}
		k := dbc.Key{ID: f.ID, Extended: f.Extended()}
		if t, ok := last[k]; ok && f.Time > t {
			intervals[k] = append(intervals[k], f.Time-t)
		}
		last[k] = f.Time
	}
	out := make(map[dbc.Key]time.Duration, len(intervals))
	for k, iv := range intervals {
		slices.Sort(iv)
		out[k] = time.Duration(iv[len(iv)/2])
	}
	return out, nil
}
