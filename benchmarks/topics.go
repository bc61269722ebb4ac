package benchmarks

import (
	"fmt"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/pipeline"
)

// signalTopics resolves, the way the decoder does, each published
// signal's topic under the default topic template, and which of them have
// a heartbeat in policyFile (empty: the default policy).
func signalTopics(dbcFile, policyFile string) (topics []string, heartbeat map[string]bool, err error) {
	db, err := dbc.Load(dbcFile)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: %w", err)
	}
	pol := pipeline.DefaultPolicy()
	if policyFile != "" {
		if pol, err = pipeline.LoadPolicy(policyFile); err != nil {
			return nil, nil, fmt.Errorf("bench: %w", err)
		}
	}
	e, err := pipeline.New(db, pipeline.Config{Policies: pol}, pipeline.SinkFunc(func(*pipeline.Out) {}))
	if err != nil {
		return nil, nil, fmt.Errorf("bench: %w", err)
	}
	topics = e.Topics()
	var published []*dbc.Signal
	for _, s := range db.Signals {
		if e.Policy(s).Publish {
			published = append(published, s)
		}
	}
	if len(published) != len(topics) {
		return nil, nil, fmt.Errorf("bench: %d published signals but %d topics", len(published), len(topics))
	}
	heartbeat = map[string]bool{}
	for i, s := range published {
		if e.Policy(s).Heartbeat > 0 {
			heartbeat[topics[i]] = true
		}
	}
	return topics, heartbeat, nil
}
