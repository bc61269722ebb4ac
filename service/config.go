package service

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/internal/base/flagenv"
	"github.com/yukart/candec/internal/base/readfile"
	"github.com/yukart/candec/internal/base/termtext"
	"github.com/yukart/candec/mqttclient"
	"github.com/yukart/candec/pipeline"
)

// Defaults of Config (the connection's are mqttclient's, its keys'
// Default); DefaultConfig returns them.
const (
	DefaultClientID        = "candec"
	DefaultRawTopic        = "yukart/can/raw"
	DefaultStatusTopic     = "yukart/decoder/status"
	DefaultTopicTemplate   = pipeline.DefaultTopicTemplate
	DefaultEncoding        = "json"
	DefaultWindowPeriod    = pipeline.DefaultWindowPeriod
	DefaultMetricsAddr     = "127.0.0.1:9464"
	DefaultLogFormat       = "text"
	DefaultLogLevel        = "info"
	DefaultClockLag        = 100 * time.Millisecond
	DefaultReconnectMax    = mqttclient.DefaultReconnectMax
	DefaultShutdownTimeout = 5 * time.Second
	// MinReconnectMax is the least reconnect_max: the MQTT client's first
	// wait after a failed attempt.
	MinReconnectMax = 100 * time.Millisecond
)

// EnvConfig names the config file of `candec run`, like --config.
const EnvConfig = "CANDEC_CONFIG"

// OtherEnv lists the CANDEC_ variables that are not config keys and that
// EnvOverrides lets pass: the config file's name, and those of the tests,
// CI and the bench. Any other CANDEC_ variable is an error, as an unknown
// key in the file is: a misspelt CANDEC_BORKER must not be ignored.
var OtherEnv = []string{
	EnvConfig,
	"CANDEC_REQUIRE_MOSQUITTO",    // tests: a missing mosquitto fails
	"CANDEC_REQUIRE_NATS",         // tests: a nats-server that cannot be built fails
	"CANDEC_TEST_EMBEDDED_BROKER", // tests: use the embedded broker
	"CANDEC_REALDATA",             // tests: the real-world DBC files and log
	"CANDEC_BENCH_HOST",           // candec bench: the machine's name in its report
}

// Config is the service's configuration. Every field is one key of the
// YAML config file, the flag --key (with '-' for '_') and the environment
// variable CANDEC_KEY; see the package documentation for the table.
type Config struct {
	// Settings are the connection's keys: broker, client_id, username,
	// password, ca_file, cert_file, key_file and keepalive, as
	// mqttclient describes them for every command.
	mqttclient.Settings
	// QoS of the raw subscription and the envelopes: 0 or 1.
	QoS int
	// RawTopic is the raw batch topic (a filter; wildcards allowed).
	RawTopic string
	// StatusTopic carries "online" and "offline", retained.
	StatusTopic string
	// TopicTemplate names each signal's topic: {signal}, {message},
	// {bus} and {sa} (see pipeline.Config).
	TopicTemplate string
	// Encoding of the envelopes: json or msgpack.
	Encoding string
	// WindowTopic enables the window stream on this topic when not empty.
	WindowTopic string
	// WindowPeriod is the window stream's window in frame time.
	WindowPeriod time.Duration
	// DBC lists the DBC files as given, each "FILE" for every interface
	// or "IFACE=FILE" for one (see dbc.BusFiles and DBCFiles).
	DBC []string
	// Policy is the policy file; empty for the built-in default policy.
	Policy string
	// MetricsAddr is where /metrics and /healthz listen; empty for none.
	MetricsAddr string
	// LogFormat is text or json; LogLevel debug, info, warn or error.
	LogFormat, LogLevel string
	// ClockLag is how far the service's "now" stays behind the frames'
	// time, measured by the wall clock, when frames stop (see the package
	// documentation, "Time").
	ClockLag time.Duration
	// ReconnectMax is the longest wait between two connection attempts.
	ReconnectMax time.Duration
	// ShutdownTimeout bounds the final flush and the "offline" publish.
	ShutdownTimeout time.Duration
	// Campaign holds the campaign keys (campaign.go); off by default.
	Campaign CampaignConfig

	// origin says where each key was last set ("candec.yaml:7",
	// "environment CANDEC_QOS", "flag --qos"), for error messages.
	origin map[string]string
}

// DefaultConfig returns the configuration with every default set and no
// DBC file.
func DefaultConfig() Config {
	return Config{
		Settings:        mqttclient.DefaultSettings(DefaultClientID),
		RawTopic:        DefaultRawTopic,
		StatusTopic:     DefaultStatusTopic,
		TopicTemplate:   DefaultTopicTemplate,
		Encoding:        DefaultEncoding,
		WindowPeriod:    DefaultWindowPeriod,
		MetricsAddr:     DefaultMetricsAddr,
		LogFormat:       DefaultLogFormat,
		LogLevel:        DefaultLogLevel,
		ClockLag:        DefaultClockLag,
		ReconnectMax:    DefaultReconnectMax,
		ShutdownTimeout: DefaultShutdownTimeout,
		Campaign:        CampaignConfig{AckTopic: DefaultCampaignAckTopic},
	}
}

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("service: bad config")

// ConfigError is a bad configuration value: where it was set, which key,
// and what is wrong.
type ConfigError struct {
	// Where names the source: "candec.yaml:7", "environment CANDEC_QOS",
	// "flag --qos", or "" for a default or a missing key.
	Where string
	// Key is the config key.
	Key string
	// Msg says what is wrong.
	Msg string
}

// Error reads like "candec.yaml:7: qos: must be 0 or 1, got 2".
func (e *ConfigError) Error() string {
	if e.Where == "" {
		return "config: " + termtext.Key(e.Key) + ": " + e.Msg
	}
	return e.Where + ": " + termtext.Key(e.Key) + ": " + e.Msg
}

// Unwrap returns ErrConfig.
func (e *ConfigError) Unwrap() error { return ErrConfig }

func (c *Config) errorf(key, format string, args ...any) error {
	return &ConfigError{Where: c.origin[key], Key: key, Msg: fmt.Sprintf(format, args...)}
}

// key is one config key: its YAML name, its help, and how to set it from
// text and write it as text. A new key is one row of keys and the field
// of Config it is kept in.
type key struct {
	name string
	help string
	list bool // a list: a YAML sequence, or comma-separated text
	// path: file names; relative ones in the config file are relative
	// to the file's directory.
	path bool
	set  func(c *Config, v string) error
	// get returns the value as the text that would set it ("" for the
	// password, which is never shown).
	get func(c *Config) string
}

// strKey is a key of text kept in *f(c).
func strKey(name, help string, f func(c *Config) *string) key {
	return key{
		name: name, help: help,
		set: func(c *Config, v string) error { *f(c) = v; return nil },
		get: func(c *Config) string { return *f(c) },
	}
}

// durKey is a key of a duration kept in *f(c).
func durKey(name, help string, f func(c *Config) *time.Duration) key {
	return key{
		name: name, help: help,
		set: func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("not a duration (like 100ms or 5s): %s", termtext.Quote(v))
			}
			*f(c) = d
			return nil
		},
		get: func(c *Config) string { return f(c).String() },
	}
}

// pathKey marks k's value as a file name.
func pathKey(k key) key {
	k.path = true
	return k
}

// keys lists every config key, in the order the documentation gives:
// the connection's, as mqttclient describes them, then the service's.
var keys = append(connectionKeys(mqttclient.Keys()), []key{
	{
		name: "qos", help: "`QoS` of the raw subscription and the envelopes, 0 or 1",
		set: func(c *Config, v string) error {
			q, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("not an integer: %s", termtext.Quote(v))
			}
			c.QoS = q
			return nil
		},
		get: func(c *Config) string { return strconv.Itoa(c.QoS) },
	},
	strKey("raw_topic", "raw batch `topic` (a filter)", func(c *Config) *string { return &c.RawTopic }),
	strKey("status_topic", "status `topic` (online/offline, retained)", func(c *Config) *string { return &c.StatusTopic }),
	strKey("topic_template", "signal topic `template`: {signal}, {message}, {bus}, {sa}", func(c *Config) *string { return &c.TopicTemplate }),
	strKey("encoding", "envelope `encoding`: json or msgpack", func(c *Config) *string { return &c.Encoding }),
	strKey("window_topic", "window stream `topic`; empty for none", func(c *Config) *string { return &c.WindowTopic }),
	durKey("window_period", "window stream window in frame time, a `duration` > 0", func(c *Config) *time.Duration { return &c.WindowPeriod }),
	{
		name: "dbc", help: "DBC `[IFACE=]FILE[,FILE]`: for every interface, or with IFACE= for that interface (can<bus index>) alone", list: true, path: true,
		set: func(c *Config, v string) error {
			// Read as every command's --dbc reads it, for its errors.
			if strings.TrimSpace(v) != "" {
				var b dbc.BusFiles
				if err := b.Set(v); err != nil {
					return err
				}
			}
			c.DBC = nil
			for _, f := range strings.Split(v, ",") {
				if f = strings.TrimSpace(f); f != "" {
					c.DBC = append(c.DBC, f)
				}
			}
			return nil
		},
		get: func(c *Config) string { return strings.Join(c.DBC, ",") },
	},
	pathKey(strKey("policy", "policy `file`; empty for the built-in default", func(c *Config) *string { return &c.Policy })),
	strKey("metrics_addr", "listen `address` of /metrics and /healthz (host:port); empty for none", func(c *Config) *string { return &c.MetricsAddr }),
	strKey("log_format", "log `format`: text or json", func(c *Config) *string { return &c.LogFormat }),
	strKey("log_level", "log `level`: debug, info, warn or error", func(c *Config) *string { return &c.LogLevel }),
	durKey("clock_lag", "how far policy time trails the frames when they stop, a `duration` >= 0", func(c *Config) *time.Duration { return &c.ClockLag }),
	durKey("reconnect_max", "longest wait between connection attempts, a `duration` >= 100ms", func(c *Config) *time.Duration { return &c.ReconnectMax }),
	durKey("shutdown_timeout", "bound on the final flush and offline publish, a `duration` > 0", func(c *Config) *time.Duration { return &c.ShutdownTimeout }),
	strKey("vehicle", "this car's vehicle `id`, which a campaign's vehicles must match", func(c *Config) *string { return &c.Campaign.Vehicle }),
	strKey("campaign_topic", "`topic` to take signed policy campaigns from; empty for none (docs/campaigns.md)", func(c *Config) *string { return &c.Campaign.Topic }),
	pathKey(strKey("campaign_key", "public key `file` campaigns must be signed with", func(c *Config) *string { return &c.Campaign.Key })),
	pathKey(strKey("campaign_state", "`file` that keeps the applied campaign across restarts", func(c *Config) *string { return &c.Campaign.State })),
	strKey("campaign_ack_topic", "`topic` of the car's campaign acknowledgement (retained)", func(c *Config) *string { return &c.Campaign.AckTopic }),
}...)

// connectionKeys makes config keys of mqttclient's settings (ks is
// mqttclient.Keys()): one description of broker, client_id, … keepalive
// for `run` and every other command.
func connectionKeys(ks []mqttclient.Key) []key {
	var out []key
	for _, k := range ks {
		help := k.Help
		if k.Secret {
			help += " (prefer " + flagenv.EnvName(k.Name) + " to a flag)"
		}
		out = append(out, key{
			name: k.Name, help: help, path: k.Path,
			set: func(c *Config, v string) error { return k.Set(&c.Settings, v) },
			get: func(c *Config) string { return k.Get(&c.Settings) },
		})
	}
	return out
}

func findKey(name string) *key {
	for i := range keys {
		if keys[i].name == name {
			return &keys[i]
		}
	}
	return nil
}

// Override is one value that replaces a key's value from the file.
type Override struct {
	// Where names the source, as in ConfigError.
	Where string
	// Key is the config key; Value its text.
	Key, Value string
}

// EnvOverrides returns the overrides in environ (os.Environ's form): one
// per CANDEC_KEY variable of a config key. Variables without the CANDEC_
// prefix, and those in OtherEnv, are left out; any other CANDEC_
// variable is an override of an unknown key, which LoadConfig reports
// as an error naming the variable.
func EnvOverrides(environ []string) []Override {
	var out []Override
	for _, kv := range environ {
		name, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, flagenv.EnvPrefix) || slices.Contains(OtherEnv, name) {
			continue
		}
		k := strings.ToLower(strings.TrimPrefix(name, flagenv.EnvPrefix))
		out = append(out, Override{Where: "environment " + name, Key: k, Value: v})
	}
	return out
}

// FlagOverrides collects the config flags given on a command line.
type FlagOverrides struct {
	list []Override
}

// RegisterFlags defines a flag for every config key on fs (--broker,
// --client-id, --dbc, …) and returns what the command line sets, in
// order. Each flag's help shows a placeholder for its value and the
// key's default.
func RegisterFlags(fs *flag.FlagSet) *FlagOverrides {
	fo := &FlagOverrides{}
	def := DefaultConfig()
	for _, k := range keys {
		name := flagenv.FlagName(k.name)
		fs.Var(&flagenv.Value{Default: k.get(&def), Record: func(v string) error {
			fo.list = append(fo.list, Override{Where: "flag --" + name, Key: k.name, Value: v})
			return nil
		}}, name, k.help+" (env "+flagenv.EnvName(k.name)+")")
	}
	return fo
}

// Overrides returns the flags given, in command-line order.
func (fo *FlagOverrides) Overrides() []Override {
	if fo == nil {
		return nil
	}
	return fo.list
}

// MaxConfigSize is the largest config file LoadConfig reads: 1 MiB. A
// bigger file, or one that is not a regular file (a FIFO, a device), is
// refused before it is read.
const MaxConfigSize = 1 << 20

// LoadConfig builds the configuration: the defaults, then the YAML file
// at path (when not empty), then each override in order (the
// environment's, then the flags'), then Validate. Every error names the
// file and line, the environment variable or the flag, the key, and what
// is wrong.
func LoadConfig(path string, overrides ...[]Override) (Config, error) {
	c := DefaultConfig()
	if path != "" {
		data, err := readfile.Read(context.Background(), path, MaxConfigSize)
		if err != nil {
			return Config{}, fmt.Errorf("%w: %v", ErrConfig, err)
		}
		if err := c.parseYAML(path, data); err != nil {
			return Config{}, err
		}
	}
	for _, list := range overrides {
		for _, o := range list {
			if err := c.Set(o); err != nil {
				return Config{}, err
			}
		}
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Set sets one key from text, remembering where the value came from.
func (c *Config) Set(o Override) error {
	k := findKey(o.Key)
	if k == nil {
		return unknownKey(o.Where, o.Key)
	}
	if err := k.set(c, o.Value); err != nil {
		return &ConfigError{Where: o.Where, Key: o.Key, Msg: err.Error()}
	}
	c.setOrigin(o.Key, o.Where)
	return nil
}

func (c *Config) setOrigin(key, where string) {
	if c.origin == nil {
		c.origin = make(map[string]string)
	}
	c.origin[key] = where
}

// unknownKey is the error of a key, or a CANDEC_ variable, that sets
// nothing; it suggests the nearest known name.
func unknownKey(where, name string) error {
	env := strings.HasPrefix(where, "environment ")
	msg := "unknown key"
	if env {
		msg = "unknown variable"
	}
	if k := nearestKey(name); k != "" {
		if env {
			msg += "; did you mean " + flagenv.EnvName(k) + "?"
		} else {
			msg += "; did you mean " + k + "?"
		}
	}
	msg += " (known: " + keyNames() + ")"
	if env {
		msg += "; other CANDEC_ variables allowed: " + strings.Join(OtherEnv, ", ")
	}
	return &ConfigError{Where: where, Key: name, Msg: msg}
}

// nearestKey returns the known key closest to name, when it is close
// enough to be a misspelling (at most a third of its letters differ).
func nearestKey(name string) string {
	best, bestD := "", len(name)/3+1
	for _, k := range keys {
		if len(name)-len(k.name) >= bestD || len(k.name)-len(name) >= bestD {
			continue // the distance is at least the difference in length
		}
		if d := editDistance(name, k.name); d < bestD {
			best, bestD = k.name, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func keyNames() string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.name
	}
	return strings.Join(names, ", ")
}

// parseYAML applies a YAML mapping of keys to c. Unknown keys, duplicate
// keys and values of the wrong shape are errors naming file and line.
func (c *Config) parseYAML(file string, data []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		// yaml.v3 says "yaml: line 3: did not find expected key".
		msg, where := strings.TrimPrefix(err.Error(), "yaml: "), file
		if rest, ok := strings.CutPrefix(msg, "line "); ok {
			if n, text, ok := strings.Cut(rest, ": "); ok {
				if _, err := strconv.Atoi(n); err == nil {
					where, msg = file+":"+n, text
				}
			}
		}
		return &ConfigError{Where: where, Key: "(file)", Msg: msg}
	}
	if len(doc.Content) == 0 {
		return nil // an empty file sets nothing
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return &ConfigError{Where: fmt.Sprintf("%s:%d", file, root.Line), Key: "(file)", Msg: "want a mapping of config keys"}
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		kn, vn := root.Content[i], root.Content[i+1]
		where := fmt.Sprintf("%s:%d", file, kn.Line)
		name := kn.Value
		if seen[name] {
			return &ConfigError{Where: where, Key: name, Msg: "set twice"}
		}
		seen[name] = true
		k := findKey(name)
		if k == nil {
			return unknownKey(where, name)
		}
		var text string
		switch {
		case vn.Kind == yaml.ScalarNode:
			text = vn.Value
			if vn.Tag == "!!null" {
				text = ""
			}
		case vn.Kind == yaml.SequenceNode && k.list:
			items := make([]string, 0, len(vn.Content))
			for _, it := range vn.Content {
				if it.Kind != yaml.ScalarNode || strings.Contains(it.Value, ",") {
					return &ConfigError{Where: fmt.Sprintf("%s:%d", file, it.Line), Key: name, Msg: "want a file name"}
				}
				items = append(items, it.Value)
			}
			text = strings.Join(items, ",")
		default:
			want := "a single value"
			if k.list {
				want = "a list or a single value"
			}
			return &ConfigError{Where: where, Key: name, Msg: "want " + want}
		}
		if k.path {
			text = relativeTo(filepath.Dir(file), text, name == "dbc")
		}
		if err := c.Set(Override{Where: where, Key: name, Value: text}); err != nil {
			return err
		}
	}
	return nil
}

// relativeTo resolves the relative file names in a comma-separated list
// against dir: a config file names its files as seen from where it lies,
// wherever candec runs. With ifaces, an item may be IFACE=FILE.
func relativeTo(dir, list string, ifaces bool) string {
	if list == "" {
		return ""
	}
	names := strings.Split(list, ",")
	for i, n := range names {
		// With ifaces (dbc's IFACE=FILE), the file is after the "=".
		iface, n, named := strings.Cut(strings.TrimSpace(n), "=")
		if !named || !ifaces {
			iface, n, named = "", strings.TrimSpace(names[i]), false
		}
		if n = strings.TrimSpace(n); n != "" && !filepath.IsAbs(n) {
			n = filepath.Join(dir, n)
		}
		if named {
			n = iface + "=" + n
		}
		names[i] = n
	}
	return strings.Join(names, ",")
}

// DBCFiles returns the files of DBC by interface, as dbc.LoadBuses
// takes them.
func (c *Config) DBCFiles() (dbc.BusFiles, error) {
	var b dbc.BusFiles
	if err := b.Set(strings.Join(c.DBC, ",")); err != nil {
		return b, c.errorf("dbc", "%v", err)
	}
	return b, nil
}

// Where returns where key was last set ("candec.yaml:7", "environment
// CANDEC_DBC", "flag --dbc"), or "" for a default.
func (c *Config) Where(key string) string { return c.origin[key] }

// Validate reports the first bad value, naming where it was set.
func (c *Config) Validate() error {
	if err := c.Settings.Validate(); err != nil {
		var se *mqttclient.SettingError
		if errors.As(err, &se) {
			return c.errorf(se.Key, "%s", se.Msg)
		}
		return &ConfigError{Key: "broker", Msg: err.Error()}
	}
	if c.QoS != 0 && c.QoS != 1 {
		return c.errorf("qos", "must be 0 or 1, got %d", c.QoS)
	}
	if err := checkFilter(c.RawTopic); err != nil {
		return c.errorf("raw_topic", "%v", err)
	}
	if err := checkTopic(c.StatusTopic); err != nil {
		return c.errorf("status_topic", "%v", err)
	}
	if err := (pipeline.Config{TopicTemplate: c.TopicTemplate}).Validate(); err != nil {
		return c.errorf("topic_template", "%s", strings.TrimPrefix(err.Error(), "pipeline: "))
	}
	if _, err := envelope.ParseEncoding(c.Encoding); err != nil {
		return c.errorf("encoding", "%s", strings.TrimPrefix(err.Error(), "envelope: "))
	}
	if c.WindowTopic != "" {
		if err := checkTopic(c.WindowTopic); err != nil {
			return c.errorf("window_topic", "%v", err)
		}
	}
	if err := c.checkOwnTopics(); err != nil {
		return err
	}
	if err := c.validateCampaign(); err != nil {
		return err
	}
	// 0 would be taken as pipeline's default: say so rather.
	if c.WindowPeriod <= 0 {
		return c.errorf("window_period", "must be > 0 (like 10ms), got %v", c.WindowPeriod)
	}
	if len(c.DBC) == 0 {
		return c.errorf("dbc", "no DBC file given (set dbc in the config file, CANDEC_DBC or --dbc)")
	}
	if c.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			return c.errorf("metrics_addr", "want host:port or :port, got %s", termtext.Quote(c.MetricsAddr))
		}
	}
	if !slices.Contains([]string{"text", "json"}, c.LogFormat) {
		return c.errorf("log_format", "must be text or json, got %s", termtext.Quote(c.LogFormat))
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		return c.errorf("log_level", "%v", err)
	}
	if c.ClockLag < 0 {
		return c.errorf("clock_lag", "must be >= 0, got %v", c.ClockLag)
	}
	// The MQTT client would take 0 for its default, and a wait shorter
	// than its first step would make a tight loop of reconnections.
	if c.ReconnectMax < MinReconnectMax {
		return c.errorf("reconnect_max", "must be >= %v, got %v", MinReconnectMax, c.ReconnectMax)
	}
	// 0 would leave no time to publish "offline".
	if c.ShutdownTimeout <= 0 {
		return c.errorf("shutdown_timeout", "must be > 0 (like 5s), got %v", c.ShutdownTimeout)
	}
	return nil
}

// checkTopic reports a topic that cannot be published on.
func checkTopic(t string) error {
	switch {
	case t == "":
		return errors.New("must not be empty")
	case strings.ContainsAny(t, "+#\x00"):
		return fmt.Errorf("%s contains a wildcard or NUL", termtext.Quote(t))
	case !utf8.ValidString(t):
		return fmt.Errorf("%s is not UTF-8", termtext.Quote(t))
	case strings.IndexFunc(t, unicode.IsControl) >= 0:
		return fmt.Errorf("%s contains a control character", termtext.Quote(t))
	}
	return nil
}

// checkFilter reports a topic filter a broker would refuse.
func checkFilter(f string) error {
	switch {
	case f == "":
		return errors.New("must not be empty")
	case strings.Contains(f, "\x00") || !utf8.ValidString(f):
		return fmt.Errorf("%s is not valid UTF-8 text", termtext.Quote(f))
	}
	levels := strings.Split(f, "/")
	for i, l := range levels {
		if strings.Contains(l, "#") && (l != "#" || i != len(levels)-1) {
			return fmt.Errorf("%s: # must be a whole last level", termtext.Quote(f))
		}
		if strings.Contains(l, "+") && l != "+" {
			return fmt.Errorf("%s: + must be a whole level", termtext.Quote(f))
		}
	}
	return nil
}

// checkOwnTopics refuses a raw topic filter that matches a topic the
// decoder publishes on: its status, its window stream, or any topic the
// template can give a signal (a level with a placeholder matches any
// level, whatever the DBC or a reloaded policy publishes). The decoder
// would receive its own messages and count each as an invalid batch.
func (c *Config) checkOwnTopics() error {
	own := []struct{ key, topic string }{
		{"status_topic", c.StatusTopic},
		{"window_topic", c.WindowTopic},
		{"topic_template", templateFilter(c.TopicTemplate)},
	}
	for _, o := range own {
		if o.topic != "" && mqttclient.Overlap(c.RawTopic, o.topic) {
			what := fmt.Sprintf("the %s %q", o.key, o.topic)
			if o.key == "topic_template" {
				what = fmt.Sprintf("signal topics of the topic_template %q", c.TopicTemplate)
			}
			if w := c.origin[o.key]; w != "" {
				what += " (" + w + ")"
			}
			return c.errorf("raw_topic", "%q matches %s: the decoder would receive its own messages; give the raw frames a topic of their own", c.RawTopic, what)
		}
	}
	return nil
}

// templateFilter is the topic filter that matches every topic tmpl can
// give: each level holding a placeholder becomes '+'.
func templateFilter(tmpl string) string {
	tmpl = cmp.Or(tmpl, pipeline.DefaultTopicTemplate)
	levels := strings.Split(tmpl, "/")
	for i, l := range levels {
		if strings.Contains(l, "{") {
			levels[i] = "+"
		}
	}
	return strings.Join(levels, "/")
}
