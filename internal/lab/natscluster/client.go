package natscluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Identity returns the certificate and key of a client named name (its
// common name, so its user: "ingest", "fleet-admin" or a car's id),
// signed by the run's CA; each is made once.
func (c *Cluster) Identity(name string) (certFile, keyFile string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id, ok := c.ids[name]; ok {
		return id[0], id[1], nil
	}
	certFile, keyFile, err = c.ca.issue(fmt.Sprintf("client%d", len(c.ids)), name, false, time.Now(), certValid)
	if err != nil {
		return "", "", err
	}
	c.ids[name] = [2]string{certFile, keyFile}
	return certFile, keyFile, nil
}

// Connect connects to the cluster over NATS as name (Identity), with
// every node's URL and reconnects without end; opts come after the
// cluster's own.
func (c *Cluster) Connect(name string, opts ...nats.Option) (*nats.Conn, error) {
	cert, key, err := c.Identity(name)
	if err != nil {
		return nil, err
	}
	all := append([]nats.Option{
		nats.Name(name), nats.RootCAs(c.CAFile), nats.ClientCert(cert, key),
		nats.MaxReconnects(-1), nats.ReconnectWait(100 * time.Millisecond),
	}, opts...)
	nc, err := nats.Connect(c.ClientURLs(), all...)
	if err != nil {
		return nil, fmt.Errorf("natscluster: connect as %s: %w", name, err)
	}
	return nc, nil
}

// createStream makes the fleet's stream (StreamFile) as the operator,
// retrying while the cluster cannot place it yet. Each request has its
// own deadline, growing from 2 s to 16 s: a request the meta leader
// never answers (it was being elected again, or a loaded node took
// long to answer) would otherwise use up ctx's whole time. A request
// that timed out may have made the stream: the next finds it made
// (the same configuration is no error).
func (c *Cluster) createStream(ctx context.Context) error {
	cfg, err := ReadStream(c.o.ConfigDir)
	if err != nil {
		return err
	}
	nc, err := c.Connect("fleet-admin")
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	for wait := 2 * time.Second; ; wait = min(2*wait, 16*time.Second) {
		try, cancel := context.WithTimeout(ctx, wait)
		_, err := js.CreateStream(try, cfg)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return fmt.Errorf("%w: create stream %s: %v\n%s", ErrNotReady, cfg.Name, err, c.logTails(8))
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// metaLeader returns the JetStream meta leader n names (/jsz), "" when
// it names none or does not answer.
func metaLeader(ctx context.Context, n *Node) string {
	var jsz struct {
		Meta *struct {
			Leader string `json:"leader"`
		} `json:"meta_cluster"`
	}
	if err := json.Unmarshal(monitor(ctx, n, "/jsz"), &jsz); err != nil || jsz.Meta == nil {
		return ""
	}
	return jsz.Meta.Leader
}

// StreamLeader returns the name of the node that leads the fleet's
// stream, as n's /jsz says ("" when it names none).
func (c *Cluster) StreamLeader(ctx context.Context) string {
	var jsz struct {
		Accounts []struct {
			Streams []struct {
				Name    string `json:"name"`
				Cluster *struct {
					Leader string `json:"leader"`
				} `json:"cluster"`
			} `json:"stream_detail"`
		} `json:"account_details"`
	}
	for _, n := range c.Nodes {
		if n.PID() == 0 {
			continue
		}
		if json.Unmarshal(monitor(ctx, n, "/jsz?streams=true"), &jsz) != nil {
			continue
		}
		for _, a := range jsz.Accounts {
			for _, s := range a.Streams {
				if s.Name == c.Stream && s.Cluster != nil && s.Cluster.Leader != "" {
					return s.Cluster.Leader
				}
			}
		}
	}
	return ""
}
