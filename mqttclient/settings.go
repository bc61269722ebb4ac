package mqttclient

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// DefaultBroker is the broker a command reaches when none is given.
const DefaultBroker = "mqtt://127.0.0.1:1883"

// EnvPrefix starts the environment variable of every setting:
// CANDEC_BROKER sets broker, CANDEC_PASSWORD sets password.
const EnvPrefix = "CANDEC_"

// Bounds of Settings.KeepAlive: MQTT sends it in whole seconds, as 16
// bits, and 0 there would turn the keep-alive off.
const (
	MinKeepAlive = time.Second
	MaxKeepAlive = 65535 * time.Second
)

// ErrSettings is wrapped by a SettingError that is neither about the URL
// (ErrURL) nor about TLS (ErrTLS).
var ErrSettings = errors.New("mqttclient: bad connection setting")

// Settings say how to reach a broker: everything a person gives a
// command (a flag, a CANDEC_ variable, a key of `candec run`'s config
// file) to connect. Config adds what a program decides: timeouts, the
// will, the callbacks.
//
// There is no setting for TCP_NODELAY: every connection sets it (see
// the package documentation). Turning it off would buy nothing on the
// car, where messages are small and each one is wanted at once, and
// would bring back the 40 ms latency tail of Nagle's algorithm.
type Settings struct {
	// Broker is the broker's URL: mqtt://host:port or mqtts://host:port
	// (see the package documentation, "URLs").
	Broker string
	// ClientID identifies the client to the broker; it must be unique
	// among the broker's clients.
	ClientID string
	// Username and Password authenticate the client; empty for none.
	// (The URL's user information also gives them, when Username is
	// empty.)
	Username, Password string
	// CAFile is a PEM bundle of the CAs that sign the broker's
	// certificate (mqtts only; empty means the system's roots).
	CAFile string
	// CertFile and KeyFile are a PEM client certificate and key (mqtts
	// only; both or neither).
	CertFile, KeyFile string
	// KeepAlive is the MQTT keep-alive, from MinKeepAlive to
	// MaxKeepAlive in whole seconds; 0 means DefaultKeepAlive.
	KeepAlive time.Duration
}

// DefaultSettings returns the settings of a client called clientID on
// DefaultBroker, with DefaultKeepAlive.
func DefaultSettings(clientID string) Settings {
	return Settings{Broker: DefaultBroker, ClientID: clientID, KeepAlive: DefaultKeepAlive}
}

// SettingError is a setting that cannot be used: which one, where it was
// set, and what is wrong.
type SettingError struct {
	// Where names the flag ("--ca-file") or the variable
	// ("CANDEC_CA_FILE") that set it; "" when not known.
	Where string
	// Key is the setting's key (see Keys).
	Key string
	// Msg says what is wrong.
	Msg string
	// Err is ErrURL, ErrTLS or ErrSettings.
	Err error
}

// Error reads like "--keepalive: must be between 1s and 18h12m15s, got
// 0s", or "mqttclient: keepalive: …" when Where is empty.
func (e *SettingError) Error() string {
	if e.Where != "" {
		return e.Where + ": " + e.Msg
	}
	return "mqttclient: " + e.Key + ": " + e.Msg
}

// Unwrap returns Err.
func (e *SettingError) Unwrap() error { return e.Err }

// Validate reports the first setting that cannot be used, as a
// *SettingError; the CA, certificate and key files are read only when
// connecting.
func (s Settings) Validate() error {
	u, err := ParseURL(s.Broker)
	if err != nil {
		return &SettingError{Key: "broker", Msg: strings.TrimPrefix(err.Error(), "mqttclient: "), Err: ErrURL}
	}
	if s.ClientID == "" {
		return &SettingError{Key: "client_id", Msg: "must not be empty", Err: ErrSettings}
	}
	if !isTLS(u) {
		for _, f := range []struct{ key, file string }{{"ca_file", s.CAFile}, {"cert_file", s.CertFile}, {"key_file", s.KeyFile}} {
			if f.file != "" {
				return &SettingError{Key: f.key, Msg: "needs an mqtts:// broker URL, got " + s.Broker, Err: ErrTLS}
			}
		}
	}
	if (s.CertFile == "") != (s.KeyFile == "") {
		if s.CertFile == "" {
			return &SettingError{Key: "key_file", Msg: "needs cert_file too", Err: ErrTLS}
		}
		return &SettingError{Key: "cert_file", Msg: "needs key_file too", Err: ErrTLS}
	}
	if s.KeepAlive != 0 {
		if err := checkKeepAlive(s.KeepAlive); err != nil {
			return &SettingError{Key: "keepalive", Msg: err.Error(), Err: ErrSettings}
		}
	}
	return nil
}

func checkKeepAlive(d time.Duration) error {
	if d < MinKeepAlive || d > MaxKeepAlive || d%time.Second != 0 {
		return fmt.Errorf("must be whole seconds from %v to %v, got %v", MinKeepAlive, MaxKeepAlive, d)
	}
	return nil
}

// TLSConfig returns the TLS configuration of the broker's URL: nil for a
// plain one, and for mqtts:// the CA file, the client certificate and
// the server name to check. It reads the files.
func (s Settings) TLSConfig() (*tls.Config, error) {
	u, err := ParseURL(s.Broker)
	if err != nil {
		return nil, err
	}
	return s.tlsConfig(u)
}

func (s Settings) tlsConfig(u *url.URL) (*tls.Config, error) {
	if !isTLS(u) {
		if s.CAFile != "" || s.CertFile != "" || s.KeyFile != "" {
			return nil, fmt.Errorf("%w: CA, certificate and key files need an mqtts:// URL, got %s", ErrTLS, s.Broker)
		}
		return nil, nil
	}
	cfg, err := TLSConfig(s.CAFile, s.CertFile, s.KeyFile)
	if err != nil {
		return nil, err
	}
	cfg.ServerName = u.Hostname()
	return cfg, nil
}

// Dial opens the network connection to the broker (TCP_NODELAY, and TLS
// for mqtts://), for a client that speaks MQTT itself.
func (s Settings) Dial(ctx context.Context) (net.Conn, error) {
	u, err := ParseURL(s.Broker)
	if err != nil {
		return nil, err
	}
	tlsCfg, err := s.tlsConfig(u)
	if err != nil {
		return nil, err
	}
	return Dial(ctx, u, tlsCfg)
}

// User returns the user name and password: Username and Password, or
// the URL's user information when Username is empty.
func (s Settings) User() (name, password string) {
	if s.Username != "" {
		return s.Username, s.Password
	}
	if u, err := ParseURL(s.Broker); err == nil && u.User != nil {
		p, _ := u.User.Password()
		return u.User.Username(), p
	}
	return "", s.Password
}

// Key describes one setting as text: its name in a config file, its
// help, and how to read and write it. FlagName and EnvName give its flag
// and its variable.
type Key struct {
	// Name is the key: "broker", "client_id", …
	Name string
	// Help is the flag's help, with its value's placeholder in back
	// quotes (see flag.UnquoteUsage).
	Help string
	// Path: the value names a file (a config file's relative names are
	// relative to its directory).
	Path bool
	// Secret: the password. It is never shown as a default, and
	// AddFlags gives it no flag: a command line is visible to every
	// user of the machine, the environment is not.
	Secret bool
	// Set sets the key from text; its error says what is wrong with v.
	Set func(s *Settings, v string) error
	// Get returns the key's value as the text that would set it ("" for
	// the password).
	Get func(s *Settings) string
}

func strKey(name, help string, path bool, f func(s *Settings) *string) Key {
	return Key{
		Name: name, Help: help, Path: path,
		Set: func(s *Settings, v string) error { *f(s) = v; return nil },
		Get: func(s *Settings) string { return *f(s) },
	}
}

// keys lists the settings, in the order the documentation gives.
var keys = []Key{
	strKey("broker", "broker `URL`: mqtt://host:port or mqtts://host:port", false, func(s *Settings) *string { return &s.Broker }),
	strKey("client_id", "MQTT client `id`, unique among the broker's clients", false, func(s *Settings) *string { return &s.ClientID }),
	strKey("username", "broker user `name`", false, func(s *Settings) *string { return &s.Username }),
	{
		Name: "password", Help: "broker `password` (prefer CANDEC_PASSWORD to a flag)", Secret: true,
		Set: func(s *Settings, v string) error { s.Password = v; return nil },
		Get: func(*Settings) string { return "" },
	},
	strKey("ca_file", "PEM CA bundle `file` for mqtts", true, func(s *Settings) *string { return &s.CAFile }),
	strKey("cert_file", "PEM client certificate `file` for mqtts", true, func(s *Settings) *string { return &s.CertFile }),
	strKey("key_file", "PEM client key `file` for mqtts", true, func(s *Settings) *string { return &s.KeyFile }),
	{
		Name: "keepalive", Help: fmt.Sprintf("MQTT keep-alive, a `duration` of whole seconds from %v to %v", MinKeepAlive, MaxKeepAlive),
		Set: func(s *Settings, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("not a duration (like 100ms or 5s): %q", v)
			}
			if err := checkKeepAlive(d); err != nil {
				return err
			}
			s.KeepAlive = d
			return nil
		},
		Get: func(s *Settings) string {
			if s.KeepAlive == 0 {
				return ""
			}
			return s.KeepAlive.String()
		},
	},
}

// Keys returns the settings' descriptions: broker, client_id, username,
// password, ca_file, cert_file, key_file and keepalive. `candec run`
// makes config keys of them; AddFlags, flags.
func Keys() []Key { return append([]Key(nil), keys...) }

// FlagName returns the flag of a key: "client_id" is --client-id.
func FlagName(key string) string { return strings.ReplaceAll(key, "_", "-") }

// EnvName returns the environment variable of a key: "client_id" is
// CANDEC_CLIENT_ID.
func EnvName(key string) string { return EnvPrefix + strings.ToUpper(key) }

// Flags are a command's connection flags, defined by AddFlags.
type Flags struct {
	def   Settings
	given []given // in command-line order
}

// given is one value of a key, from a flag or a variable.
type given struct {
	where, key, value string
}

// AddFlags defines the connection flags on fs: --broker, --client-id,
// --username, --ca-file, --cert-file, --key-file and --keepalive, each
// showing def's value as its default. A value a flag cannot take
// (--keepalive 1x) is refused when fs parses it, naming the flag. The
// password has no flag: it comes from CANDEC_PASSWORD (or the URL).
func AddFlags(fs *flag.FlagSet, def Settings) *Flags {
	f := &Flags{def: def}
	for _, k := range keys {
		if k.Secret {
			continue
		}
		name := FlagName(k.Name)
		help := k.Help + " (env " + EnvName(k.Name) + ")"
		switch k.Name {
		case "client_id":
			help = k.Help
		case "username":
			help = k.Help + " (env " + EnvName(k.Name) + "; the password comes from " + EnvName("password") + ")"
		}
		fs.Var(&flagValue{def: k.Get(&def), set: func(v string) error {
			var scratch Settings
			if err := k.Set(&scratch, v); err != nil {
				return err
			}
			f.given = append(f.given, given{where: "--" + name, key: k.Name, value: v})
			return nil
		}}, name, help)
	}
	return f
}

// Settings returns the defaults given to AddFlags, overridden by the
// settings' variables in environ (os.Environ's form: CANDEC_BROKER, …,
// CANDEC_PASSWORD; not CANDEC_CLIENT_ID, which is `candec run`'s),
// overridden by the flags given. When the broker URL
// is not empty the result is validated; an empty one is left to the
// caller (demo and bench then start their own broker). Every error is a
// *SettingError naming the flag or the variable.
func (f *Flags) Settings(environ []string) (Settings, error) {
	s := f.def
	where := map[string]string{}
	for _, g := range append(envGiven(environ), f.given...) {
		for _, k := range keys {
			if k.Name != g.key {
				continue
			}
			if err := k.Set(&s, g.value); err != nil {
				return Settings{}, &SettingError{Where: g.where, Key: k.Name, Msg: err.Error(), Err: ErrSettings}
			}
			where[k.Name] = g.where
		}
	}
	if s.Broker == "" {
		return s, nil
	}
	if err := s.Validate(); err != nil {
		var se *SettingError
		if errors.As(err, &se) {
			if se.Where = where[se.Key]; se.Where == "" {
				se.Where = "--" + FlagName(se.Key)
			}
		}
		return Settings{}, err
	}
	return s, nil
}

// Given reports whether a flag or variable set key.
func (f *Flags) Given(key string) bool {
	for _, g := range f.given {
		if g.key == key {
			return true
		}
	}
	return false
}

// envGiven returns the values of the settings' variables in environ,
// but CANDEC_CLIENT_ID's: exported for `candec run`, it would give a
// watch or a replay the decoder's id, and the broker would hand them
// the decoder's session, disconnecting it.
func envGiven(environ []string) []given {
	var out []given
	for _, kv := range environ {
		name, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		for _, k := range keys {
			if k.Name != "client_id" && EnvName(k.Name) == name {
				out = append(out, given{where: name, key: k.Name, value: v})
			}
		}
	}
	return out
}

// Args returns the flags that give a candec command these settings,
// except the client id (each process has its own) and the password,
// which the command reads from CANDEC_PASSWORD: a command line is
// visible to every user of the machine.
func (s Settings) Args() []string {
	args := []string{"--broker", s.Broker}
	for _, k := range keys {
		if k.Secret || k.Name == "broker" || k.Name == "client_id" {
			continue
		}
		if v := k.Get(&s); v != "" {
			args = append(args, "--"+FlagName(k.Name), v)
		}
	}
	return args
}

// flagValue is a connection flag: it checks and records what the
// command line sets, and shows the default in the help (the flag package
// prints the default when it differs from the String of a zero
// flagValue, "").
type flagValue struct {
	def string
	set func(string) error
}

func (f *flagValue) String() string {
	if f == nil {
		return ""
	}
	return f.def
}

func (f *flagValue) Set(v string) error { return f.set(v) }
