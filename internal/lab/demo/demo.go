package demo

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
	"golang.org/x/sync/errgroup"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/base/defaults"
	"github.com/yukart/candec/internal/cmdkit/replay"
	"github.com/yukart/candec/internal/lab/broker"
	"github.com/yukart/candec/internal/lab/cardata"
	"github.com/yukart/candec/mqttclient"
	"github.com/yukart/candec/service"
)

// Defaults of Options.
const (
	// DefaultDBC and DefaultCapture are the car's test data, relative to
	// the repository root; outside a clone, the copies built into candec
	// (package cardata) stand in for them.
	DefaultDBC     = cardata.DBCFile
	DefaultCapture = cardata.CaptureFile
	// DefaultRefresh is how often a terminal is redrawn.
	DefaultRefresh = 250 * time.Millisecond
	// lineEvery is how often a summary line is printed when the output
	// is not a terminal.
	lineEvery = time.Second
	// DefaultPrefix is the topic prefix on a broker given by URL: the
	// demo's raw batches, signals and status stay apart from a decoder
	// that may serve the car on the same broker.
	DefaultPrefix = "candec-demo"
	// EmbeddedPrefix is the prefix on the embedded broker, where nothing
	// else runs: the production topics, so the demo shows their names.
	EmbeddedPrefix = "yukart"
	// DefaultConnectTimeout bounds the wait for a broker given by URL.
	DefaultConnectTimeout = 10 * time.Second
)

// Errors.
var (
	// ErrNotFound: a data file is neither where it was given nor at the
	// repository root.
	ErrNotFound = errors.New("demo: file not found")
	// ErrDecoderOnline: a decoder says "online" on the status topic the
	// demo would use.
	ErrDecoderOnline = errors.New("demo: a decoder is online on these topics")
	// ErrOptions: an option is out of its range.
	ErrOptions = errors.New("demo: bad options")
)

// Topics are the topics a demo uses under a prefix P: P/can/raw,
// P/vehicle/{signal} and P/decoder/status, as the service's defaults are
// under "yukart"; and P/demo/probe/<client id>, on which the demo checks
// that it has read the retained status.
type Topics struct {
	Raw, SignalPrefix, Template, Status, Probe string
}

// TopicsFor returns the topics under prefix.
func TopicsFor(prefix string) Topics {
	return Topics{
		Raw:          prefix + "/can/raw",
		SignalPrefix: prefix + "/vehicle/",
		Template:     prefix + "/vehicle/{signal}",
		Status:       prefix + "/decoder/status",
		Probe:        prefix + "/demo/probe/",
	}
}

// Options configure a demo.
type Options struct {
	// Broker says how to reach a real broker: its URL, credentials, TLS
	// files, keep-alive. An empty URL (Broker.Broker) starts the embedded
	// broker. Broker.ClientID, when not empty, starts the demo's client
	// ids (its decoder's, and -check, -board, -replay after it).
	Broker mqttclient.Settings
	// DBC, Capture and Policy are files; relative paths are tried from
	// the working directory, then from the repository root. An empty DBC
	// or Capture is DefaultDBC or DefaultCapture, or where that is
	// missing, its copy built into candec. An empty Policy is the
	// built-in default policy.
	DBC, Capture, Policy string
	// Prefix is the topics' prefix (see Topics); empty means
	// DefaultPrefix with Broker, EmbeddedPrefix without.
	Prefix string
	// Force runs the demo even when a decoder says "online" on the
	// prefix's status topic; without it the demo refuses
	// (ErrDecoderOnline), since the two would decode each other's
	// frames and overwrite each other's signals and status.
	Force bool
	// ConnectTimeout bounds the wait for Broker to accept a connection;
	// default DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// Speed plays the capture faster, from replay.MinSpeed to
	// replay.MaxSpeed (0: 1, its own timing).
	Speed float64
	// Duration ends the demo; 0 runs until ctx ends.
	Duration time.Duration
	// Out receives the board; TTY says it is a terminal of Rows lines
	// (0: unknown), where the board is redrawn every Refresh.
	Out     io.Writer
	TTY     bool
	Rows    int
	Refresh time.Duration
	// Log receives the service's log (nil: discarded, so that it does
	// not break the board).
	Log *slog.Logger
}

// Run runs the demo until ctx ends or Duration passes, then prints a
// final summary. It returns an error when a file is missing, an option is
// out of range, the broker cannot be reached, a decoder is online on the
// demo's topics, or a part cannot start.
func Run(ctx context.Context, o Options) error {
	o, err := o.filled()
	if err != nil {
		return err
	}
	topics := TopicsFor(o.Prefix)
	in, err := loadInputs(ctx, o)
	if err != nil {
		return err
	}
	clientID := cmp.Or(o.Broker.ClientID, fmt.Sprintf("candec-demo-%d", os.Getpid()))

	conn, where := o.Broker, "a real broker"
	if conn.Broker != "" {
		// Reach the broker and look at the status topic before anything
		// runs, and before Duration starts.
		if err := check(ctx, conn, clientID+"-check", topics, o.ConnectTimeout, o.Force); err != nil {
			return err
		}
	}
	if o.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Duration)
		defer cancel()
	}
	if conn.Broker == "" {
		// The broker outlives ctx: the service says "offline" after it.
		b, err := broker.Start(context.WithoutCancel(ctx), "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer b.Close()
		conn, where = mqttclient.Settings{Broker: b.URL()}, "the embedded broker"
	}

	cfg := serviceConfig(conn, clientID, topics, in)
	svc, err := service.New(cfg, in.db, o.Log, nil)
	if err != nil {
		return err
	}
	board := NewBoard(topics.SignalPrefix, cfg.StatusTopic, time.Now())
	// The connections come up before the service and the display start,
	// so that a broker that went away since the check is an error.
	watcher, err := watchBoard(ctx, conn, cfg.ClientID, topics, board, o.ConnectTimeout)
	if err != nil || watcher == nil {
		return err
	}
	defer disconnect(watcher)
	bridge, err := connect(ctx, conn, cfg.ClientID+"-replay", o.ConnectTimeout, nil, nil)
	if err != nil {
		return err
	}
	defer disconnect(bridge)

	header := fmt.Sprintf("candec demo: %s replayed in a loop to %s (%s) on %s, decoded with %s, %s\n",
		in.capPath, conn.Broker, where, topics.Raw, in.dbcPath, policyName(in.policy))
	err = play(ctx, o, svc, board, mqttclient.NewPublisher(bridge, cfg.RawTopic, 0, false, ""), in.open, header)
	// The decoder said "offline" before Run returned; let it reach the
	// board.
	select {
	case <-board.Offline():
	case <-time.After(time.Second):
	}
	fmt.Fprintln(o.Out)
	board.Render(o.Out, time.Now(), 0)
	return err
}

// filled returns o with its defaults filled in, or ErrOptions when an
// option is out of its range.
func (o Options) filled() (Options, error) {
	o.Refresh = defaults.Positive(o.Refresh, DefaultRefresh)
	o.Speed = cmp.Or(o.Speed, 1)
	o.ConnectTimeout = defaults.Positive(o.ConnectTimeout, DefaultConnectTimeout)
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
		if o.Broker.Broker == "" {
			o.Prefix = EmbeddedPrefix
		}
	}
	o.Log = cmp.Or(o.Log, slog.New(slog.DiscardHandler))
	switch {
	case !(o.Speed >= replay.MinSpeed && o.Speed <= replay.MaxSpeed):
		return o, fmt.Errorf("%w: speed %g is outside %g to %g", ErrOptions, o.Speed, float64(replay.MinSpeed), float64(replay.MaxSpeed))
	case o.Duration < 0:
		return o, fmt.Errorf("%w: duration %v is negative", ErrOptions, o.Duration)
	case strings.ContainsAny(o.Prefix, "+#\x00") || strings.HasPrefix(o.Prefix, "/") || strings.HasSuffix(o.Prefix, "/") || !utf8.ValidString(o.Prefix):
		return o, fmt.Errorf("%w: prefix %q must be topic levels without wildcards, and without a leading or trailing /", ErrOptions, o.Prefix)
	}
	return o, nil
}

// inputs are a demo's files, found and read: the DBC, the capture (open
// reads it from the start, each loop) and the policy.
type inputs struct {
	dbcPath, capPath, policy string
	db                       *dbc.Database
	open                     func() (capture.Source, error)
}

// loadInputs finds and reads the DBC, capture and policy of o, the
// copies built into candec standing in for missing defaults. A capture
// that cannot be read is said here, before anything starts.
func loadInputs(ctx context.Context, o Options) (inputs, error) {
	var in inputs
	dbcPath, builtInDBC, err := locateData(o.DBC, DefaultDBC)
	if err != nil {
		return in, err
	}
	capPath, builtInCapture, err := locateData(o.Capture, DefaultCapture)
	if err != nil {
		return in, err
	}
	open := replay.OpenFile(ctx, capPath, capture.Options{})
	if builtInCapture {
		data, err := cardata.Capture()
		if err != nil {
			return in, err
		}
		capPath = cardata.CaptureName
		open = func() (capture.Source, error) { return capture.NewSource(bytes.NewReader(data), capture.Options{}) }
	}
	c, err := open()
	if err != nil {
		return in, err
	}
	if cl, ok := c.(io.Closer); ok {
		cl.Close()
	}
	policy := ""
	if o.Policy != "" {
		if policy, err = Locate(o.Policy); err != nil {
			return in, err
		}
	}
	var db *dbc.Database
	if builtInDBC {
		dbcPath = cardata.DBCName
		db, err = cardata.LoadDBC()
	} else {
		db, err = dbc.Load(dbcPath)
	}
	if err != nil {
		return in, err
	}
	return inputs{dbcPath: dbcPath, capPath: capPath, policy: policy, db: db, open: open}, nil
}

// serviceConfig is the demo's decoder: the service's defaults on conn,
// the demo's topics and files, no metrics endpoint.
func serviceConfig(conn mqttclient.Settings, clientID string, topics Topics, in inputs) service.Config {
	cfg := service.DefaultConfig()
	keepAlive := cfg.KeepAlive
	cfg.Settings = conn
	cfg.ClientID = clientID
	cfg.KeepAlive = cmp.Or(cfg.KeepAlive, keepAlive)
	cfg.RawTopic = topics.Raw
	cfg.StatusTopic = topics.Status
	cfg.TopicTemplate = topics.Template
	cfg.DBC = []string{in.dbcPath}
	cfg.Policy = in.policy
	cfg.MetricsAddr = ""
	return cfg
}

// watchBoard connects the board's client to conn and waits until the
// broker acknowledges its subscription to the signals and the status.
// The board listens before the decoder starts: it must hear this
// decoder's "online" live (a retained one may be an earlier run's), and
// the replay waits for that. It returns a nil client and no error when
// ctx ends first.
func watchBoard(ctx context.Context, conn mqttclient.Settings, clientID string, topics Topics, board *Board, timeout time.Duration) (*autopaho.ConnectionManager, error) {
	subscribed := make(chan struct{})
	var subscribedOnce sync.Once
	watcher, err := connect(ctx, conn, clientID+"-board", timeout, func(cm *autopaho.ConnectionManager) {
		go func() {
			_, err := cm.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{
				{Topic: topics.SignalPrefix + "+"}, {Topic: topics.Status},
			}})
			if err == nil {
				subscribedOnce.Do(func() { close(subscribed) })
			}
		}()
	}, func(p *paho.Publish) {
		if p.Retain {
			board.ObserveRetained(p.Topic, p.Payload, time.Now())
			return
		}
		board.Observe(p.Topic, p.Payload, time.Now())
	})
	if err != nil {
		return nil, err
	}
	select {
	case <-subscribed:
		return watcher, nil
	case <-ctx.Done():
		disconnect(watcher)
		return nil, nil
	case <-time.After(timeout):
		disconnect(watcher)
		return nil, fmt.Errorf("demo: %s did not acknowledge the board's subscription within %v", conn.Broker, timeout)
	}
}

// play runs the decoder, the replay of the capture in a loop through pub
// and the display of the board, until ctx ends or one of them fails.
func play(ctx context.Context, o Options, svc *service.Service, board *Board, pub *mqttclient.Publisher, open func() (capture.Source, error), header string) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return svc.Run(gctx) })
	g.Go(func() error {
		// Start the replay once the decoder listens, so that the board
		// starts from the capture's first frame.
		select {
		case <-board.Online():
		case <-gctx.Done():
			return nil
		}
		_, err := replay.Run(gctx, open, pub, replay.Options{Speed: o.Speed, Loop: true})
		return err
	})
	g.Go(func() error {
		show(gctx, o, board, header)
		return nil
	})
	return g.Wait()
}

// show redraws the board until ctx ends.
func show(ctx context.Context, o Options, b *Board, header string) {
	every := o.Refresh
	if !o.TTY {
		every = lineEvery
		fmt.Fprint(o.Out, header)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if !o.TTY {
				b.Render(o.Out, now, 0)
				continue
			}
			var sb strings.Builder
			sb.WriteString("\x1b[H\x1b[2J") // home, clear
			sb.WriteString(header)
			sb.WriteString("Ctrl-C to stop.\n\n")
			rows := -1
			if o.Rows > 0 {
				rows = max(o.Rows-8, 1)
			}
			b.Render(&sb, now, rows)
			io.WriteString(o.Out, sb.String())
		}
	}
}

func policyName(p string) string {
	if p == "" {
		return "the built-in default policy"
	}
	return "policy " + p
}

// connect opens an MQTT connection, waiting at most timeout for it; onUp
// runs on every connection. The connection outlives ctx: it is closed by
// disconnect.
func connect(ctx context.Context, conn mqttclient.Settings, id string, timeout time.Duration, onUp func(*autopaho.ConnectionManager), onPublish func(*paho.Publish)) (*autopaho.ConnectionManager, error) {
	url := conn.Broker
	conn.ClientID = id
	attempts := mqttclient.NewAttempts()
	cfg := mqttclient.Config{Settings: conn, OnPublish: onPublish, ConnectTimeout: timeout, OnConnectError: attempts.Record}
	if onUp != nil {
		cfg.OnUp = func(cm *autopaho.ConnectionManager, _ *paho.Connack) { onUp(cm) }
	}
	cm, err := mqttclient.Connect(context.WithoutCancel(ctx), cfg)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	if err := attempts.Await(ctx, cm, url, timeout); err != nil {
		disconnect(cm)
		return nil, fmt.Errorf("demo: %w", err)
	}
	return cm, nil
}

// check connects to the broker and reads the retained status on
// topics.Status. A decoder that says "online" there is an error unless
// force: the demo would feed it frames and take over its topics.
func check(ctx context.Context, conn mqttclient.Settings, id string, topics Topics, timeout time.Duration, force bool) error {
	url := conn.Broker
	var (
		mu     sync.Mutex
		status string
	)
	statusTopic, probe := topics.Status, topics.Probe+id
	probed := make(chan struct{})
	var once sync.Once
	cm, err := connect(ctx, conn, id, timeout, nil, func(p *paho.Publish) {
		switch p.Topic {
		case statusTopic:
			mu.Lock()
			status = string(p.Payload)
			mu.Unlock()
		case probe:
			once.Do(func() { close(probed) })
		}
	})
	if err != nil {
		return err
	}
	defer disconnect(cm)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := cm.Subscribe(cctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: statusTopic}, {Topic: probe}}}); err != nil {
		return fmt.Errorf("demo: subscribe to %s on %s: %w", statusTopic, url, err)
	}
	// The broker sends the retained status when it handles the
	// SUBSCRIBE, so before the echo of a message published after it.
	// At QoS 1 its PUBACK says whether the user may write the prefix
	// (a broker drops a QoS 0 message the ACL forbids without a word).
	if _, err := cm.Publish(cctx, &paho.Publish{Topic: probe, QoS: 1, Payload: []byte("probe")}); err != nil {
		return fmt.Errorf("demo: publish on %s of %s: %w (may the user write the prefix's topics?)", probe, url, err)
	}
	select {
	case <-probed:
	case <-cctx.Done():
		// mosquitto grants a SUBSCRIBE the ACL forbids, and then
		// delivers nothing.
		return fmt.Errorf("demo: %s did not echo a message on %s within %v (may the user read the prefix's topics?)", url, probe, timeout)
	}
	mu.Lock()
	defer mu.Unlock()
	if status == "online" && !force {
		return fmt.Errorf("%w: %s says online on %s; choose another --prefix, stop that decoder, or --force to run anyway", ErrDecoderOnline, statusTopic, url)
	}
	return nil
}

func disconnect(cm *autopaho.ConnectionManager) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = cm.Disconnect(ctx)
	<-cm.Done()
}

// Locate finds a data file: as given, or, for a relative path, under the
// repository root (the nearest directory above the working directory
// with a go.mod), so that `go run ./cmd/candec demo` works from any
// directory of a clone.
func Locate(path string) (string, error) {
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if !filepath.IsAbs(path) {
		if dir, err := os.Getwd(); err == nil {
			for {
				if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
					p := filepath.Join(dir, path)
					if _, err := os.Stat(p); err == nil {
						return p, nil
					}
					break
				}
				parent := filepath.Dir(dir)
				if parent == dir {
					break
				}
				dir = parent
			}
		}
	}
	return "", fmt.Errorf("%w: %s (not here, nor under the repository root: run from a clone of candec, or give the file's path)", ErrNotFound, path)
}

// locateData locates a data file given as path, or when path is empty
// the default file def. builtIn says that def is found nowhere, and its
// copy built into candec stands in for it.
func locateData(path, def string) (found string, builtIn bool, err error) {
	if path != "" {
		found, err = Locate(path)
		return found, false, err
	}
	found, err = Locate(def)
	if errors.Is(err, ErrNotFound) {
		return "", true, nil
	}
	return found, false, err
}
