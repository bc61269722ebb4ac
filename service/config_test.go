package service

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/internal/base/flagenv"
	"github.com/yukart/candec/mqttclient"
)

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExampleConfigLoads(t *testing.T) {
	c, err := LoadConfig("../examples/candec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.DBC = []string{"../testdata/yukart.dbc"} // relative to examples/
	c.origin, want.origin = nil, nil
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("examples/candec.yaml gives\n%+v\nwant the defaults with its dbc\n%+v", c, want)
	}
}

// TestConfigPrecedence: defaults < file < environment < flags.
func TestConfigPrecedence(t *testing.T) {
	file := writeFile(t, "candec.yaml", "broker: mqtt://file:1883\nqos: 1\ndbc: [a.dbc, b.dbc]\nclock_lag: 1s\n")
	env := EnvOverrides([]string{"CANDEC_BROKER=mqtt://env:1883", "CANDEC_DBC=c.dbc, d.dbc", "CANDEC_REALDATA=/x", "PATH=/bin"})
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	flags := RegisterFlags(fs)
	if err := fs.Parse([]string{"--broker", "mqtts://flag", "--client-id", "car7"}); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(file, env, flags.Overrides())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"broker (flag over env over file)", c.Broker, "mqtts://flag"},
		{"client_id (flag)", c.ClientID, "car7"},
		{"dbc (env over file)", c.DBC, []string{"c.dbc", "d.dbc"}},
		{"qos (file)", c.QoS, 1},
		{"clock_lag (file)", c.ClockLag, time.Second},
		{"raw_topic (default)", c.RawTopic, DefaultRawTopic},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

// TestConfigErrors: one line naming where, the key and what is wrong.
func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		env  []string
		want string // the error after the file name
	}{
		{"bad qos", "dbc: x.dbc\nqos: 2\n", nil, ":2: qos: must be 0 or 1, got 2"},
		{"unknown key", "dbc: x.dbc\nbrokr: mqtt://x\n", nil, ":2: brokr: unknown key; did you mean broker? (known: broker, client_id,"},
		{"unknown key, nothing near", "dbc: x.dbc\nspeed: 3\n", nil, ":2: speed: unknown key (known: broker, client_id,"},
		{"unknown variable", "dbc: x.dbc\n", []string{"CANDEC_BORKER=mqtt://x"}, "environment CANDEC_BORKER: borker: unknown variable; did you mean CANDEC_BROKER? (known: broker,"},
		{"unknown variable, nothing near", "dbc: x.dbc\n", []string{"CANDEC_XYZZY_PLUGH=1"}, "environment CANDEC_XYZZY_PLUGH: xyzzy_plugh: unknown variable (known: broker,"},
		{"broker without scheme", "dbc: x.dbc\nbroker: 127.0.0.1:1883\n", nil, `:2: broker: bad broker URL "127.0.0.1:1883": must be mqtt://host:port or mqtts://host:port`},
		{"broker without scheme, env", "dbc: x.dbc\n", []string{"CANDEC_BROKER=localhost:1883"}, `environment CANDEC_BROKER: broker: bad broker URL "localhost:1883": must be mqtt://host:port or mqtts://host:port`},
		{"set twice", "dbc: x.dbc\nqos: 0\nqos: 1\n", nil, ":3: qos: set twice"},
		{"bad duration", "dbc: x.dbc\nclock_lag: soon\n", nil, `:2: clock_lag: not a duration (like 100ms or 5s): "soon"`},
		{"not a mapping", "- a\n- b\n", nil, ":1: (file): want a mapping of config keys"},
		{"list for a scalar", "dbc: x.dbc\nbroker: [a, b]\n", nil, ":2: broker: want a single value"},
		{"bad scheme", "dbc: x.dbc\nbroker: http://x\n", nil, `:2: broker: bad broker URL "http://x": scheme must be mqtt:// or mqtts://`},
		{"tls file without mqtts", "dbc: x.dbc\nca_file: ca.pem\n", nil, ":2: ca_file: needs an mqtts:// broker URL, got mqtt://127.0.0.1:1883"},
		{"cert without key", "dbc: x.dbc\nbroker: mqtts://x\ncert_file: c.pem\n", nil, ":3: cert_file: needs key_file too"},
		{"wildcard status topic", "dbc: x.dbc\nstatus_topic: a/+\n", nil, `:2: status_topic: "a/+" contains a wildcard or NUL`},
		{"bad raw filter", "dbc: x.dbc\nraw_topic: a/#/b\n", nil, `:2: raw_topic: "a/#/b": # must be a whole last level`},
		{"bad template", "dbc: x.dbc\ntopic_template: car/{sig}\n", nil, ":2: topic_template: "},
		{"bad encoding", "dbc: x.dbc\nencoding: xml\n", nil, `:2: encoding: unknown encoding "xml" (want json or msgpack)`},
		{"bad log format", "dbc: x.dbc\nlog_format: xml\n", nil, `:2: log_format: must be text or json, got "xml"`},
		{"bad log level", "dbc: x.dbc\nlog_level: loud\n", nil, `:2: log_level: must be debug, info, warn or error, got "loud"`},
		{"bad metrics addr", "dbc: x.dbc\nmetrics_addr: 9464\n", nil, `:2: metrics_addr: want host:port or :port, got "9464"`},
		{"no dbc", "qos: 0\n", nil, "config: dbc: no DBC file given"},
		{"env names the variable", "dbc: x.dbc\n", []string{"CANDEC_QOS=high"}, `environment CANDEC_QOS: qos: not an integer: "high"`},
		{"yaml syntax", "dbc: [x.dbc\n", nil, ":1: (file): did not find expected ',' or ']'"},
		{"window period 0", "dbc: x.dbc\nwindow_period: 0s\n", nil, ":2: window_period: must be > 0 (like 10ms), got 0s"},
		{"window period negative, window on", "dbc: x.dbc\nwindow_topic: w\nwindow_period: -1ms\n", nil, ":3: window_period: must be > 0 (like 10ms), got -1ms"},
		{"clock lag negative", "dbc: x.dbc\nclock_lag: -1ms\n", nil, ":2: clock_lag: must be >= 0, got -1ms"},
		{"reconnect max 0", "dbc: x.dbc\nreconnect_max: 0s\n", nil, ":2: reconnect_max: must be >= 100ms, got 0s"},
		{"reconnect max too short", "dbc: x.dbc\nreconnect_max: 1ms\n", nil, ":2: reconnect_max: must be >= 100ms, got 1ms"},
		{"shutdown timeout 0", "dbc: x.dbc\nshutdown_timeout: 0s\n", nil, ":2: shutdown_timeout: must be > 0 (like 5s), got 0s"},
		{"shutdown timeout negative, env", "dbc: x.dbc\n", []string{"CANDEC_SHUTDOWN_TIMEOUT=-2s"}, "environment CANDEC_SHUTDOWN_TIMEOUT: shutdown_timeout: must be > 0 (like 5s), got -2s"},
		{"qos negative", "dbc: x.dbc\nqos: -1\n", nil, ":2: qos: must be 0 or 1, got -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "candec.yaml", tc.file)
			_, err := LoadConfig(path, EnvOverrides(tc.env))
			if err == nil {
				t.Fatalf("got no error, want %q", tc.want)
			}
			if !errors.Is(err, ErrConfig) {
				t.Errorf("error %v does not wrap ErrConfig", err)
			}
			msg := err.Error()
			if len(msg) > len(path) && msg[:len(path)] == path {
				msg = msg[len(path):]
			}
			if len(msg) < len(tc.want) || msg[:len(tc.want)] != tc.want {
				t.Errorf("got %q, want it to start with %q", err.Error(), tc.want)
			}
		})
	}
}

// TestOtherEnvAllowed: the CANDEC_ variables of the tests, CI and the
// bench are not config keys, and pass.
func TestOtherEnvAllowed(t *testing.T) {
	path := writeFile(t, "candec.yaml", "dbc: x.dbc\n")
	var environ []string
	for _, name := range OtherEnv {
		environ = append(environ, name+"=1")
	}
	if _, err := LoadConfig(path, EnvOverrides(environ)); err != nil {
		t.Fatalf("got %v, want %v allowed", err, OtherEnv)
	}
}

// TestConfigRelativePaths: relative file names in the config file are
// relative to its directory; in flags and variables, to the working
// directory.
func TestConfigRelativePaths(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "etc", "candec.yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	text := "broker: mqtts://b\ndbc: [car.dbc, ../dbc/radar.dbc, /abs/x.dbc]\npolicy: policy.yaml\nca_file: tls/ca.pem\ncert_file: c.pem\nkey_file: c.key\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	etc := filepath.Join(dir, "etc")
	for _, tc := range []struct {
		name      string
		overrides []Override
		key       string
		got       func(c Config) any
		want      any
	}{
		{"dbc list", nil, "dbc", func(c Config) any { return c.DBC },
			[]string{filepath.Join(etc, "car.dbc"), filepath.Join(dir, "dbc", "radar.dbc"), "/abs/x.dbc"}},
		{"policy", nil, "policy", func(c Config) any { return c.Policy }, filepath.Join(etc, "policy.yaml")},
		{"ca_file", nil, "ca_file", func(c Config) any { return c.CAFile }, filepath.Join(etc, "tls", "ca.pem")},
		{"cert_file", nil, "cert_file", func(c Config) any { return c.CertFile }, filepath.Join(etc, "c.pem")},
		{"key_file", nil, "key_file", func(c Config) any { return c.KeyFile }, filepath.Join(etc, "c.key")},
		{"a flag stays relative to the working directory", []Override{{Where: "flag --dbc", Key: "dbc", Value: "here.dbc"}}, "dbc",
			func(c Config) any { return c.DBC }, []string{"here.dbc"}},
		{"a variable too", EnvOverrides([]string{"CANDEC_POLICY=p.yaml"}), "policy",
			func(c Config) any { return c.Policy }, "p.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadConfig(path, tc.overrides)
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.got(c); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s: got %v, want %v", tc.key, got, tc.want)
			}
		})
	}
}

// TestFlagHelp: `run -h` shows, for every flag, a placeholder for its
// value (not the flag package's "value") and the key's default.
func TestFlagHelp(t *testing.T) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	RegisterFlags(fs)
	var help strings.Builder
	fs.SetOutput(&help)
	fs.PrintDefaults()
	def := DefaultConfig()
	for _, k := range keys {
		f := fs.Lookup(flagenv.FlagName(k.name))
		name, _ := flag.UnquoteUsage(f)
		if name == "" || name == "value" {
			t.Errorf("--%s: got placeholder %q, want one that says what the value is", f.Name, name)
		}
		want := k.get(&def)
		if f.DefValue != want {
			t.Errorf("--%s: got default %q, want %q", f.Name, f.DefValue, want)
		}
		line := "-" + f.Name + " " + name + "\n"
		if !strings.Contains(help.String(), line) {
			t.Errorf("help lacks %q:\n%s", line, help.String())
		}
		if want != "" && !strings.Contains(help.String(), "(default "+want+")") {
			t.Errorf("help of --%s lacks (default %s)", f.Name, want)
		}
	}
}

func TestFlagNames(t *testing.T) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	RegisterFlags(fs)
	for _, k := range keys {
		if fs.Lookup(flagenv.FlagName(k.name)) == nil {
			t.Errorf("no flag --%s for key %s", flagenv.FlagName(k.name), k.name)
		}
	}
	if got := flagenv.EnvName("client_id"); got != "CANDEC_CLIENT_ID" {
		t.Errorf("flagenv.EnvName(client_id) = %s, want CANDEC_CLIENT_ID", got)
	}
}

// TestConfigErrorsCutLongText: a config error quotes at most 80
// characters of a key or value however long, and escapes what a
// terminal would act on.
func TestConfigErrorsCutLongText(t *testing.T) {
	big := strings.Repeat("ab", MaxConfigSize/4) // long, within the file's limit
	for _, tt := range []struct {
		name, src string
		env       []string
		want      string
	}{
		{"unknown key", "? k" + big + "\n: 1\n", nil, "unknown key"},
		{"integer", "dbc: x.dbc\nqos: " + big + "\n", nil, "not an integer"},
		{"log format", "dbc: x.dbc\nlog_format: " + big + "\n", nil, "must be text or json"},
		{"topic", "dbc: x.dbc\nstatus_topic: \"a/#" + big + "\"\n", nil, "wildcard"},
		{"environment", "dbc: x.dbc\n", []string{"CANDEC_QOS=\x1b[2J" + big}, "not an integer"},
		{"control character", "dbc: x.dbc\nstatus_topic: \"a/\\e[2J\"\n", nil, "control character"},
	} {
		path := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(path, []byte(tt.src), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadConfig(path, EnvOverrides(tt.env))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %.200v, want an error saying %q", tt.name, err, tt.want)
			continue
		}
		if s := err.Error(); len(s) > 1000 || strings.Contains(s, "\x1b") {
			t.Errorf("%s: got an error of %d bytes, want at most 1000 (the known keys listed) and no ESC: %.200q", tt.name, len(s), s)
		}
	}
}

// TestKeysText: every key says its value as text in its own row, and
// that text sets the same value again: a key added without it fails
// here, not in `run -h` or in what a reload compares.
func TestKeysText(t *testing.T) {
	c, err := LoadConfig("", []Override{
		{Key: "broker", Value: "mqtts://b:8883"}, {Key: "client_id", Value: "car7"}, {Key: "username", Value: "u"},
		{Key: "password", Value: "p"}, {Key: "ca_file", Value: "ca.pem"}, {Key: "cert_file", Value: "c.pem"},
		{Key: "key_file", Value: "c.key"}, {Key: "keepalive", Value: "1m"}, {Key: "qos", Value: "1"},
		{Key: "raw_topic", Value: "r/#"}, {Key: "status_topic", Value: "s/t"}, {Key: "topic_template", Value: "v/{message}/{signal}"},
		{Key: "encoding", Value: "msgpack"}, {Key: "window_topic", Value: "w/t"}, {Key: "window_period", Value: "20ms"},
		{Key: "dbc", Value: "a.dbc,b.dbc"}, {Key: "policy", Value: "p.yaml"}, {Key: "metrics_addr", Value: ":9000"},
		{Key: "log_format", Value: "json"}, {Key: "log_level", Value: "debug"}, {Key: "clock_lag", Value: "1s"},
		{Key: "reconnect_max", Value: "2s"}, {Key: "shutdown_timeout", Value: "3s"},
		{Key: "vehicle", Value: "kart07"}, {Key: "campaign_topic", Value: "c/p"}, {Key: "campaign_key", Value: "k.pub"},
		{Key: "campaign_state", Value: "s.json"}, {Key: "campaign_ack_topic", Value: "c/a"},
	})
	if err != nil {
		t.Fatal(err)
	}
	def := DefaultConfig()
	for _, k := range keys {
		if k.get == nil {
			t.Errorf("key %s: no text form in its row", k.name)
			continue
		}
		text := c.text(k.name)
		if k.name == "password" {
			if text != "" {
				t.Errorf("password shown as %q, want it never shown", text)
			}
			continue
		}
		if text == def.text(k.name) {
			t.Errorf("key %s: text %q is the default's; the test must set every key", k.name, text)
		}
		again := DefaultConfig()
		if err := again.Set(Override{Key: k.name, Value: text}); err != nil {
			t.Errorf("key %s: its text %q does not set it: %v", k.name, text, err)
		} else if got := again.text(k.name); got != text {
			t.Errorf("key %s: got %q after setting %q, want it unchanged", k.name, got, text)
		}
	}
}

// TestAddedBrokerKeyReachesRun: a setting added to mqttclient's table
// is a key of `candec run`'s config file, its variable and its flag
// (with its help and default), each naming itself in a refusal, with no
// edit of this package.
func TestAddedBrokerKeyReachesRun(t *testing.T) {
	var v string
	added := mqttclient.Key{
		Name: "added_key", Help: "an added `thing`", Default: "def", Path: true,
		Set: func(_ *mqttclient.Settings, s string) error {
			if strings.HasSuffix(s, "bad") {
				return errors.New("not a thing")
			}
			v = s
			return nil
		},
		Get: func(*mqttclient.Settings) string { return v },
	}
	saved := keys
	t.Cleanup(func() { keys = saved })
	n := len(mqttclient.Keys())
	keys = append(connectionKeys(append(mqttclient.Keys(), added)), saved[n:]...)

	file := writeFile(t, "candec.yaml", "dbc: a.dbc\nadded_key: x.pem\n")
	if _, err := LoadConfig(file); err != nil || v != filepath.Join(filepath.Dir(file), "x.pem") {
		t.Errorf("config file: got %q (%v), want x.pem beside the file", v, err)
	}
	if _, err := LoadConfig("", EnvOverrides([]string{"CANDEC_DBC=a.dbc", "CANDEC_ADDED_KEY=env"})); err != nil || v != "env" {
		t.Errorf("CANDEC_ADDED_KEY: got %q (%v), want env", v, err)
	}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	v = "def"
	flags := RegisterFlags(fs)
	fl := fs.Lookup("added-key")
	if fl == nil {
		t.Fatal("no flag --added-key")
	}
	if want := "an added `thing` (env CANDEC_ADDED_KEY)"; fl.Usage != want || fl.DefValue != "def" {
		t.Errorf("--added-key: usage %q default %q, want %q and def", fl.Usage, fl.DefValue, want)
	}
	if err := fs.Parse([]string{"--dbc", "a.dbc", "--added-key", "flag"}); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(file, flags.Overrides()); err != nil || v != "flag" {
		t.Errorf("--added-key over the file: got %q (%v), want flag", v, err)
	}
	for _, tc := range []struct {
		file string
		env  []string
		want string
	}{
		{"dbc: a.dbc\nadded_key: bad\n", nil, "candec.yaml:2: added_key: not a thing"},
		{"dbc: a.dbc\n", []string{"CANDEC_ADDED_KEY=bad"}, "environment CANDEC_ADDED_KEY: added_key: not a thing"},
	} {
		_, err := LoadConfig(writeFile(t, "candec.yaml", tc.file), EnvOverrides(tc.env))
		if err == nil || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("got %v, want it to end with %q", err, tc.want)
		}
	}
}

// TestDocListsEveryKey: the configuration table of the package
// documentation has a row for each key, in the keys' order, showing its
// default when it has one.
func TestDocListsEveryKey(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(src), "//\tkey               default")
	var rows [][]string
	for _, line := range strings.Split(table, "\n")[1:] {
		if !strings.HasPrefix(line, "//\t") {
			break
		}
		rows = append(rows, strings.Fields(strings.TrimPrefix(line, "//\t")))
	}
	def := DefaultConfig()
	if len(rows) != len(keys) {
		t.Fatalf("doc.go's table has %d rows, there are %d keys", len(rows), len(keys))
	}
	for i, k := range keys {
		if want := k.get(&def); rows[i][0] != k.name || (want != "" && rows[i][1] != want) {
			t.Errorf("doc.go row %q, want key %s with default %q", strings.Join(rows[i], " "), k.name, want)
		}
	}
}

// text returns the value of key as the text that would set it.
func (c *Config) text(key string) string {
	if k := findKey(key); k != nil {
		return k.get(c)
	}
	return ""
}
