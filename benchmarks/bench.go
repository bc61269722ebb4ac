package benchmarks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/yukart/candec/benchmarks/report"
	"github.com/yukart/candec/benchmarks/scenario"
	"github.com/yukart/candec/internal/base/defaults"
	"github.com/yukart/candec/internal/base/flagenv"
	"github.com/yukart/candec/internal/cmdkit/progress"
	"github.com/yukart/candec/mqttclient"
)

// Topics the bench uses: the service's defaults.
const (
	RawTopic     = "yukart/can/raw"
	SignalFilter = "yukart/vehicle/+"
	WindowTopic  = "yukart/window"
	StatusTopic  = "yukart/decoder/status"
)

// Defaults of Config.
const (
	// DefaultQuiet is how long no data may arrive before the drain is
	// over.
	DefaultQuiet = 500 * time.Millisecond
	// DefaultMaxDrain bounds the drain; a run still draining then gets a
	// warning.
	DefaultMaxDrain = 60 * time.Second
	// DefaultReadyTimeout bounds the readiness gate and the decoder's
	// start.
	DefaultReadyTimeout = 20 * time.Second
	// DefaultBusyLimit is how much CPU, in % of one core, the machine may
	// use besides the bench's processes: above it a run waits before it
	// starts, and gets a warning when it is exceeded during the window.
	DefaultBusyLimit = 25.0
	// DefaultIdleWait bounds the wait for a quiet machine.
	DefaultIdleWait = 30 * time.Second
	// DefaultClientID starts the bench's client ids.
	DefaultClientID = "candec-bench"
	// MinLatencySamples is the fewest latency samples a stream may have
	// before its percentiles get a "short sample" warning.
	MinLatencySamples = 1000
)

// Errors.
var (
	// ErrNotReady: a subscriber or the decoder did not become ready.
	ErrNotReady = errors.New("bench: not ready")
	// ErrWarnings: a run had warnings and FailOnWarning was set.
	ErrWarnings = errors.New("bench: runs with warnings")
)

// Config configures a bench.
type Config struct {
	// Exe is the candec binary the decoder and the replay run from.
	Exe string
	// Broker reaches the broker to use: its URL, credentials, TLS files
	// and keep-alive, given to the bench's own clients and to the
	// decoder and replay it starts (the password through
	// CANDEC_PASSWORD). An empty URL starts a private mosquitto for each
	// run. Broker.ClientID starts every client id of the bench (default
	// DefaultClientID: candec-bench-decoder, candec-bench-raw-1, …).
	Broker mqttclient.Settings
	// BrokerPID is that broker's process ID, for its CPU; 0 leaves the
	// broker's CPU unmeasured. Ignored for the private broker.
	BrokerPID int
	// Host names this machine in results.
	Host string
	// ResultsDir receives <host>-<date>.jsonl; empty writes no file.
	ResultsDir string
	// WorkDir holds each run's logs and configuration; empty uses a
	// temporary directory, removed when every run succeeded.
	WorkDir string
	// Out receives one JSON line per run (standard output).
	Out io.Writer
	// Log receives what a person reads: histograms, percentile tables,
	// warnings (standard error).
	Log io.Writer
	// Progress shows the run's progress; nil shows none.
	Progress *progress.Bar
	// Versions holds candec's and Go's versions; the broker's is filled
	// in per run.
	Versions report.Versions
	// Quiet, MaxDrain and ReadyTimeout default to DefaultQuiet,
	// DefaultMaxDrain and DefaultReadyTimeout.
	Quiet, MaxDrain, ReadyTimeout time.Duration
	// BusyLimit and IdleWait default to DefaultBusyLimit and
	// DefaultIdleWait; a negative IdleWait starts runs without waiting
	// for a quiet machine.
	BusyLimit float64
	IdleWait  time.Duration
	// FailOnWarning makes Run return ErrWarnings, after every run, when
	// any run had a warning.
	FailOnWarning bool
}

func (c Config) withDefaults() Config {
	c.Quiet = defaults.Positive(c.Quiet, DefaultQuiet)
	c.MaxDrain = defaults.Positive(c.MaxDrain, DefaultMaxDrain)
	c.ReadyTimeout = defaults.Positive(c.ReadyTimeout, DefaultReadyTimeout)
	c.BusyLimit = defaults.Positive(c.BusyLimit, DefaultBusyLimit)
	c.IdleWait = cmp.Or(c.IdleWait, DefaultIdleWait)
	c.Broker.ClientID = cmp.Or(c.Broker.ClientID, DefaultClientID)
	c.Out = cmp.Or(c.Out, io.Discard)
	c.Log = cmp.Or(c.Log, io.Discard)
	c.Versions.Go = cmp.Or(c.Versions.Go, runtime.Version())
	return c
}

// Validate reports a config Run cannot use.
func (c Config) Validate() error {
	if c.Exe == "" {
		return errors.New("bench: no candec binary to run the decoder and the replay")
	}
	if c.Host == "" {
		return errors.New("bench: no host name")
	}
	return nil
}

// Run runs each scenario in turn, prints and appends each result, and
// returns the results. It stops at the first run that fails (a process
// that would not start, a subscriber that never became ready); a run
// with warnings is not a failure unless FailOnWarning is set, and then
// only after every run.
func Run(ctx context.Context, cfg Config, runs []scenario.Run) ([]report.Result, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	work := cfg.WorkDir
	temporary := work == ""
	if temporary {
		d, err := os.MkdirTemp("", "candec-bench-")
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		work = d
	}
	var (
		results []report.Result
		failed  bool
	)
	defer func() {
		if temporary && !failed {
			os.RemoveAll(work)
		}
	}()
	warned := 0
	for i, r := range runs {
		label := fmt.Sprintf("%s %d/%d", r.Scenario, i+1, len(runs))
		dir := filepath.Join(work, fmt.Sprintf("%02d-%s", i+1, safeName(r.Scenario)))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return results, fmt.Errorf("bench: %w", err)
		}
		res, err := runOne(ctx, cfg, r, label, dir)
		if cfg.Progress != nil {
			cfg.Progress.Clear()
		}
		if err != nil {
			failed = true
			return results, fmt.Errorf("%s: %w (logs in %s)", r.Scenario, err, dir)
		}
		if err := report.Append(cfg.Out, res); err != nil {
			return results, err
		}
		if cfg.ResultsDir != "" {
			if _, err := report.AppendFile(cfg.ResultsDir, res); err != nil {
				return results, err
			}
		}
		if len(res.Warnings) > 0 {
			warned++
		}
		results = append(results, *res)
	}
	if cfg.FailOnWarning && warned > 0 {
		return results, fmt.Errorf("%w: %d of %d", ErrWarnings, warned, len(runs))
	}
	return results, nil
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func safeName(s string) string { return unsafeChars.ReplaceAllString(s, "_") }

// cleanEnv drops the CANDEC_* variables that would change how the
// decoder and the replay run: the bench sets what it means by flags.
func cleanEnv(conn mqttclient.Settings) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CANDEC_") {
			out = append(out, kv)
		}
	}
	if conn.Password != "" {
		// Not a flag: a command line is visible to every user.
		out = append(out, flagenv.EnvName("password")+"="+conn.Password)
	}
	return out
}
