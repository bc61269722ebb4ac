package natscluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/yukart/candec/internal/base/child"
)

// Errors.
var (
	// ErrNotReady: the cluster, or a node, did not become ready in
	// time; the error holds the tail of the nodes' logs.
	ErrNotReady = errors.New("natscluster: not ready")
	// ErrNoServer: nats-server could not be found or built.
	ErrNoServer = errors.New("natscluster: nats-server not available")
)

// Defaults.
const (
	// DefaultNodes is the cluster's size (deploy/nats: 3, for R3).
	DefaultNodes = 3
	// DefaultReadyTimeout bounds each step of Start (the meta leader
	// named by every node; each of the streams and the consumer made)
	// and Restart's wait for the node to be healthy, when the context
	// has no earlier deadline. A loaded machine elects slowly.
	DefaultReadyTimeout = 60 * time.Second
	// StopTimeout is how long Stop waits after SIGTERM for a node.
	StopTimeout = 10 * time.Second
	// certValid is how long the run's certificates are valid.
	certValid = 48 * time.Hour
)

// Options configure Start.
type Options struct {
	// Binary is nats-server (Find).
	Binary string
	// ConfigDir holds ConfigFile, AccountsFile, MsgsFile,
	// SourceConsumerFile and StreamFile: the repository's deploy/nats.
	ConfigDir string
	// Dir holds the run's certificates, the nodes' stores, their
	// configuration and their logs.
	Dir string
	// Nodes is the cluster's size; 0 is DefaultNodes.
	Nodes int
	// Cars are the vehicle ids with a user each (CarUser); nil keeps
	// the configuration's own cars.
	Cars []string
	// NoStream leaves the streams and the source consumer out (a test
	// that makes its own).
	NoStream bool
}

// Cluster is a running cluster.
type Cluster struct {
	// Nodes are its nodes, in order (nats1, nats2, …).
	Nodes []*Node
	// CAFile is the PEM certificate of the run's CA: the fleet's CA.
	CAFile string
	// Stream is the fleet stream's name (StreamFile's).
	Stream string
	// Source is the durable consumer of MsgsStream through which Stream
	// takes the cars' windows (SourceConsumerFile's).
	Source string

	o      Options
	ca     *ca
	routes string

	mu   sync.Mutex
	ids  map[string][2]string // identity → cert, key
	stop bool
}

// Node is one nats-server of the cluster.
type Node struct {
	// Name is its server_name: nats1, nats2, …
	Name string
	// ClientURL is tls://127.0.0.1:port (the NATS port), MQTTURL
	// mqtts://127.0.0.1:port (the cars'), MonitorURL
	// http://127.0.0.1:port.
	ClientURL, MQTTURL, MonitorURL string
	// Log is its log file (appended to across restarts).
	Log string

	env []string
	mu  sync.Mutex
	p   *child.Process
}

// PID returns the node's process ID, 0 while it is down.
func (n *Node) PID() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.p == nil {
		return 0
	}
	select {
	case <-n.p.Exited():
		return 0
	default:
		return n.p.PID()
	}
}

// ClientURLs returns the NATS URLs of every node, comma-separated (the
// ingest's --broker).
func (c *Cluster) ClientURLs() string {
	urls := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		urls[i] = n.ClientURL
	}
	return strings.Join(urls, ",")
}

// Start starts the cluster as o says, waits until it is ready and makes
// what the operator makes (ReadDeploy: $MQTT_msgs, the source consumer,
// the fleet's stream, in that order); on an error every node started is
// stopped.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	if o.Nodes == 0 {
		o.Nodes = DefaultNodes
	}
	if o.Nodes < 1 || o.Nodes > 9 {
		return nil, fmt.Errorf("natscluster: %d nodes, want 1 to 9", o.Nodes)
	}
	var c *Cluster
	for try := 1; ; try++ {
		var err error
		if c, err = startOnce(ctx, o, try); err == nil {
			break
		} else if try == startTries || !errors.Is(err, errPortTaken) {
			return nil, err
		}
	}
	if !o.NoStream {
		// Steps of their own (each has DefaultReadyTimeout): their time
		// starts once the meta leader is known.
		if err := c.createDeploy(ctx); err != nil {
			c.Stop()
			return nil, err
		}
	}
	return c, nil
}

// startTries is how many sets of free ports Start tries: a port free a
// moment ago can be taken by another program before a node binds it.
const startTries = 3

// errPortTaken: a node could not bind one of its ports.
var errPortTaken = errors.New("natscluster: a port was taken")

// startOnce starts the nodes on free ports, in a directory of their own
// (try), and waits for their meta leader.
func startOnce(ctx context.Context, o Options, try int) (*Cluster, error) {
	o.Dir = filepath.Join(o.Dir, fmt.Sprintf("try%d", try))
	c, err := prepare(o, time.Now())
	if err != nil {
		return nil, err
	}
	for _, n := range c.Nodes {
		if err := c.startNode(n); err != nil {
			c.Stop()
			return nil, err
		}
	}
	ctx, cancel := readyContext(ctx)
	defer cancel()
	if err := c.waitMetaLeader(ctx); err != nil {
		c.Stop()
		for _, n := range c.Nodes {
			if strings.Contains(child.Tail(n.Log, 20), "address already in use") {
				return nil, fmt.Errorf("%w: %w", errPortTaken, err)
			}
		}
		return nil, err
	}
	return c, nil
}

// readyContext bounds ctx by DefaultReadyTimeout.
func readyContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, DefaultReadyTimeout)
}

// prepare writes the run's certificates and configuration and sets up
// the nodes (not started).
func prepare(o Options, now time.Time) (*Cluster, error) {
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("natscluster: %w", err)
	}
	d, err := ReadDeploy(o.ConfigDir)
	if err != nil {
		return nil, err
	}
	for _, r := range []struct {
		file, name string
		replicas   int
	}{{MsgsFile, d.Msgs.Name, d.Msgs.Replicas}, {SourceConsumerFile, d.Source.Durable, d.Source.Replicas}, {StreamFile, d.Stream.Name, d.Stream.Replicas}} {
		if r.replicas > o.Nodes {
			return nil, fmt.Errorf("natscluster: %s's %s has %d replicas: it needs as many nodes, not %d",
				r.file, r.name, r.replicas, o.Nodes)
		}
	}
	if err := copyConfig(o); err != nil {
		return nil, err
	}
	authority, err := newCA(o.Dir, now, certValid)
	if err != nil {
		return nil, err
	}
	c := &Cluster{CAFile: authority.file, Stream: d.Stream.Name, Source: d.Source.Durable, o: o, ca: authority, ids: map[string][2]string{}}
	ports, err := freePorts(4 * o.Nodes)
	if err != nil {
		return nil, err
	}
	routes := make([]string, o.Nodes)
	for i := range o.Nodes {
		routes[i] = fmt.Sprintf("nats://127.0.0.1:%d", ports[4*i+1])
	}
	c.routes = "[" + strings.Join(routes, ", ") + "]"
	for i := range o.Nodes {
		n, err := c.node(i, ports[4*i:4*i+4], now)
		if err != nil {
			return nil, err
		}
		c.Nodes = append(c.Nodes, n)
	}
	return c, nil
}

// copyConfig writes ConfigFile and AccountsFile (with o.Cars) into o.Dir,
// where the nodes read them.
func copyConfig(o Options) error {
	conf, err := os.ReadFile(filepath.Join(o.ConfigDir, ConfigFile))
	if err != nil {
		return fmt.Errorf("natscluster: %w", err)
	}
	acc, err := os.ReadFile(filepath.Join(o.ConfigDir, AccountsFile))
	if err != nil {
		return fmt.Errorf("natscluster: %w", err)
	}
	text := string(acc)
	if o.Cars != nil {
		if text, err = Accounts(text, o.Cars); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(o.Dir, ConfigFile), conf, 0o600); err != nil {
		return fmt.Errorf("natscluster: %w", err)
	}
	if err := os.WriteFile(filepath.Join(o.Dir, AccountsFile), []byte(text), 0o600); err != nil {
		return fmt.Errorf("natscluster: %w", err)
	}
	return nil
}

// node sets up node i on ports (client, cluster, MQTT, monitor) with
// its certificate.
func (c *Cluster) node(i int, ports []int, now time.Time) (*Node, error) {
	name := fmt.Sprintf("nats%d", i+1)
	cert, key, err := c.ca.issue(name, name, true, now, certValid)
	if err != nil {
		return nil, err
	}
	addr := func(p int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p)) }
	n := &Node{
		Name:       name,
		ClientURL:  "tls://" + addr(ports[0]),
		MQTTURL:    "mqtts://" + addr(ports[2]),
		MonitorURL: "http://" + addr(ports[3]),
		Log:        filepath.Join(c.o.Dir, name+".log"),
	}
	n.env = append(os.Environ(),
		"FLEET_NODE="+name,
		"FLEET_LISTEN="+addr(ports[0]),
		"FLEET_CLUSTER_LISTEN="+addr(ports[1]),
		"FLEET_MQTT_LISTEN="+addr(ports[2]),
		"FLEET_MONITOR="+addr(ports[3]),
		"FLEET_ROUTES="+c.routes,
		"FLEET_STORE="+filepath.Join(c.o.Dir, name+"-store"),
		"FLEET_CERT="+cert, "FLEET_KEY="+key, "FLEET_CA="+c.ca.file,
	)
	return n, nil
}

// freePorts returns n distinct ports of 127.0.0.1 that were free a
// moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("natscluster: free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// startNode starts n's process, its output appended to its log.
func (c *Cluster) startNode(n *Node) error {
	log, err := os.OpenFile(n.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("natscluster: %w", err)
	}
	defer log.Close()
	cmd := exec.Command(c.o.Binary, "-c", filepath.Join(c.o.Dir, ConfigFile))
	cmd.Env = n.env
	cmd.Stdout, cmd.Stderr = log, log
	p, err := child.Start(cmd)
	if err != nil {
		return fmt.Errorf("natscluster: start %s: %w", n.Name, err)
	}
	n.mu.Lock()
	n.p = p
	n.mu.Unlock()
	return nil
}

// Kill sends SIGKILL to node i by its PID and waits for it to exit.
func (c *Cluster) Kill(i int) error {
	n := c.Nodes[i]
	n.mu.Lock()
	p := n.p
	n.mu.Unlock()
	if p == nil {
		return fmt.Errorf("natscluster: %s is not running", n.Name)
	}
	if err := syscall.Kill(p.PID(), syscall.SIGKILL); err != nil {
		return fmt.Errorf("natscluster: kill %s (PID %d): %w", n.Name, p.PID(), err)
	}
	<-p.Exited()
	return nil
}

// Restart starts node i again (after Kill) on its ports and store, and
// waits until it reports itself healthy: routed, and its JetStream
// caught up (/healthz).
func (c *Cluster) Restart(ctx context.Context, i int) error {
	n := c.Nodes[i]
	if n.PID() != 0 {
		return fmt.Errorf("natscluster: %s is running (PID %d)", n.Name, n.PID())
	}
	if err := c.startNode(n); err != nil {
		return err
	}
	ctx, cancel := readyContext(ctx)
	defer cancel()
	return c.poll(ctx, func() bool { return healthy(ctx, n) })
}

// Stop stops every node by its PID (SIGTERM, then SIGKILL after
// StopTimeout). It is safe to call more than once.
func (c *Cluster) Stop() {
	var wg sync.WaitGroup
	for _, n := range c.Nodes {
		n.mu.Lock()
		p := n.p
		n.mu.Unlock()
		if p != nil {
			wg.Go(func() { _ = p.Stop(StopTimeout) })
		}
	}
	wg.Wait()
}

// waitMetaLeader waits until every node names the same JetStream meta
// leader (/jsz), so that a stream can be made on any of them.
func (c *Cluster) waitMetaLeader(ctx context.Context) error {
	return c.poll(ctx, func() bool {
		leader := ""
		for _, n := range c.Nodes {
			l := metaLeader(ctx, n)
			if l == "" || leader != "" && l != leader {
				return false
			}
			leader = l
		}
		return true
	})
}

// poll calls ready every 50 ms until it says true, a node exits or ctx
// ends.
func (c *Cluster) poll(ctx context.Context, ready func() bool) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if ready() {
			return nil
		}
		for _, n := range c.Nodes {
			n.mu.Lock()
			p := n.p
			n.mu.Unlock()
			select {
			case <-p.Exited():
				if !c.killed(n) {
					return fmt.Errorf("%w: %s exited: %v\n%s", ErrNotReady, n.Name, p.Err(), child.Tail(n.Log, 15))
				}
			default:
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %v\n%s", ErrNotReady, ctx.Err(), c.logTails(8))
		case <-tick.C:
		}
	}
}

// killed reports whether n is down on purpose: exited by a signal.
func (c *Cluster) killed(n *Node) bool {
	var ee *exec.ExitError
	n.mu.Lock()
	err := n.p.Err()
	n.mu.Unlock()
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return true
		}
	}
	return false
}

func (c *Cluster) logTails(lines int) string {
	var b strings.Builder
	for _, n := range c.Nodes {
		fmt.Fprintf(&b, "--- %s (%s)\n%s\n", n.Name, n.Log, child.Tail(n.Log, lines))
	}
	return b.String()
}

// monitor GETs path of n's monitoring port; nil when it does not answer
// 200.
func monitor(ctx context.Context, n *Node, path string) []byte {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.MonitorURL+path, nil)
	if err != nil {
		return nil
	}
	resp, err := monitorClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil
	}
	return b
}

// monitorClient keeps no connection open between polls: a test that
// checks for leaked goroutines sees none of its.
var monitorClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// healthy reports whether n's /healthz says ok.
func healthy(ctx context.Context, n *Node) bool {
	return bytes.Contains(monitor(ctx, n, "/healthz"), []byte(`"ok"`))
}
