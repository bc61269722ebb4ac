package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
	"golang.org/x/sync/errgroup"

	"github.com/yukart/candec/broker"
	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/mqttclient"
	"github.com/yukart/candec/replay"
	"github.com/yukart/candec/service"
)

// Defaults of Options.
const (
	// DefaultDBC and DefaultCapture are the car's test data, relative to
	// the repository root.
	DefaultDBC     = "testdata/yukart.dbc"
	DefaultCapture = "testdata/idle.log"
	// DefaultRefresh is how often a terminal is redrawn.
	DefaultRefresh = 250 * time.Millisecond
	// lineEvery is how often a summary line is printed when the output
	// is not a terminal.
	lineEvery = time.Second
	// signalPrefix is the signal topics' prefix under the default
	// template.
	signalPrefix = "yukart/vehicle/"
)

// ErrNotFound: a data file is neither where it was given nor at the
// repository root.
var ErrNotFound = errors.New("demo: file not found")

// Options configure a demo.
type Options struct {
	// Broker is a broker URL; empty starts the embedded broker.
	Broker string
	// DBC, Capture and Policy are files; relative paths are tried from
	// the working directory, then from the repository root. An empty
	// Policy is the built-in default policy.
	DBC, Capture, Policy string
	// Speed plays the capture faster (0 or 1: its own timing).
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
// final summary. It returns an error when a file is missing or a part
// cannot start.
func Run(ctx context.Context, o Options) error {
	if o.Refresh <= 0 {
		o.Refresh = DefaultRefresh
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	dbcPath, err := Locate(orDefault(o.DBC, DefaultDBC))
	if err != nil {
		return err
	}
	capPath, err := Locate(orDefault(o.Capture, DefaultCapture))
	if err != nil {
		return err
	}
	policy := ""
	if o.Policy != "" {
		if policy, err = Locate(o.Policy); err != nil {
			return err
		}
	}
	db, err := dbc.Load(dbcPath)
	if err != nil {
		return err
	}
	if o.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Duration)
		defer cancel()
	}

	url, where := o.Broker, "a real broker"
	if url == "" {
		// The broker outlives ctx: the service says "offline" after it.
		b, err := broker.Start(context.WithoutCancel(ctx), "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer b.Close()
		url, where = b.URL(), "the embedded broker"
	}

	cfg := service.DefaultConfig()
	cfg.Broker = url
	cfg.ClientID = fmt.Sprintf("candec-demo-%d", os.Getpid())
	cfg.DBC = []string{dbcPath}
	cfg.Policy = policy
	cfg.MetricsAddr = ""
	svc, err := service.New(cfg, db, o.Log, nil)
	if err != nil {
		return err
	}

	board := NewBoard(signalPrefix, cfg.StatusTopic, time.Now())
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return svc.Run(gctx) })

	watcher, err := connect(gctx, url, cfg.ClientID+"-board", func(cm *autopaho.ConnectionManager) {
		go func() {
			_, _ = cm.Subscribe(gctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{
				{Topic: signalPrefix + "+"}, {Topic: cfg.StatusTopic},
			}})
		}()
	}, func(p *paho.Publish) { board.Observe(p.Topic, p.Payload, time.Now()) })
	if err != nil {
		return err
	}
	defer disconnect(watcher)
	bridge, err := connect(gctx, url, cfg.ClientID+"-replay", nil, nil)
	if err != nil {
		return err
	}
	defer disconnect(bridge)

	g.Go(func() error {
		// Start the replay once the decoder listens, so that the board
		// starts from the capture's first frame.
		select {
		case <-board.Online():
		case <-gctx.Done():
			return nil
		}
		open := replay.OpenFile(capPath, capture.Options{})
		pub := mqttclient.NewPublisher(bridge, cfg.RawTopic, 0, false, "")
		_, err := replay.Run(gctx, open, pub, replay.Options{Speed: o.Speed, Loop: true})
		return err
	})

	header := fmt.Sprintf("candec demo: %s replayed in a loop to %s (%s), decoded with %s, %s\n",
		capPath, url, where, dbcPath, policyName(policy))
	g.Go(func() error {
		show(gctx, o, board, header)
		return nil
	})
	err = g.Wait()
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

// connect opens an MQTT connection; onUp runs on every connection.
func connect(ctx context.Context, url, id string, onUp func(*autopaho.ConnectionManager), onPublish func(*paho.Publish)) (*autopaho.ConnectionManager, error) {
	cfg := mqttclient.Config{URL: url, ClientID: id, OnPublish: onPublish}
	if onUp != nil {
		cfg.OnUp = func(cm *autopaho.ConnectionManager, _ *paho.Connack) { onUp(cm) }
	}
	cm, err := mqttclient.Connect(context.WithoutCancel(ctx), cfg)
	if err != nil {
		return nil, err
	}
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := cm.AwaitConnection(actx); err != nil && ctx.Err() == nil {
		disconnect(cm)
		return nil, fmt.Errorf("demo: cannot connect to %s: %w", url, err)
	}
	return cm, nil
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

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
