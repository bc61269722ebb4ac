package mqttclient

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// DefaultBroker is the broker a command reaches when none is given.
const DefaultBroker = "mqtt://127.0.0.1:1883"

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
// program to connect (candec takes them from its flags, its variables
// and `candec run`'s config file). Config adds what a program decides:
// timeouts, the will, the callbacks. Settings are plain data: fill them
// (DefaultSettings, or Keys from text) and Validate them.
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

// DefaultSettings returns the settings of a client called clientID with
// each key's Default: DefaultBroker, DefaultKeepAlive.
func DefaultSettings(clientID string) Settings {
	s := Settings{ClientID: clientID}
	for _, k := range keys {
		if k.Default != "" {
			_ = k.Set(&s, k.Default) // a row's default is valid (TestKeyDefaults)
		}
	}
	return s
}

// SettingError is a setting that cannot be used: which one, where it was
// set, and what is wrong.
type SettingError struct {
	// Where names what set it, as the caller calls it: a flag
	// ("--ca-file"), a variable, a file's line; "" when not known.
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
// help, its default, and how to read and write it. A program makes of
// it a config key, a flag or a variable, as it names them (candec: see
// internal/cmdkit/brokerflags): a setting is one row of this table, and
// nothing else lists the settings.
type Key struct {
	// Name is the key: "broker", "client_id", …
	Name string
	// Help says what the setting is in a line, with its value's
	// placeholder in back quotes (the flag package's convention, see
	// flag.UnquoteUsage).
	Help string
	// Default is the value's text before anything sets it ("" for none);
	// DefaultSettings applies it.
	Default string
	// Path: the value names a file (a config file's relative names are
	// relative to its directory).
	Path bool
	// Secret: the password. It is never shown as a default, and is
	// better given by the environment than by a flag: a command line is
	// visible to every user of the machine, the environment is not.
	Secret bool
	// Own: each program has its own value (the client id: two clients
	// with one id take the broker's session from each other). A program
	// neither passes it to another it starts nor takes it from a variable
	// exported for another.
	Own bool
	// Set sets the key from text; its error says what is wrong with v.
	Set func(s *Settings, v string) error
	// Get returns the key's value as the text that would set it ("" for
	// the password).
	Get func(s *Settings) string
}

// textKey is k with the Set and Get of a setting of text kept in *f(s).
func textKey(k Key, f func(s *Settings) *string) Key {
	k.Set = func(s *Settings, v string) error { *f(s) = v; return nil }
	k.Get = func(s *Settings) string { return *f(s) }
	return k
}

// keys lists the settings, in the order the documentation gives: a new
// setting is a row here and its field of Settings (with its check in
// Validate when it depends on another).
var keys = []Key{
	textKey(Key{Name: "broker", Help: "broker `URL`: mqtt://host:port or mqtts://host:port", Default: DefaultBroker}, func(s *Settings) *string { return &s.Broker }),
	textKey(Key{Name: "client_id", Help: "MQTT client `id`, unique among the broker's clients", Own: true}, func(s *Settings) *string { return &s.ClientID }),
	textKey(Key{Name: "username", Help: "broker user `name`"}, func(s *Settings) *string { return &s.Username }),
	{
		Name: "password", Help: "broker `password`", Secret: true,
		Set: func(s *Settings, v string) error { s.Password = v; return nil },
		Get: func(*Settings) string { return "" },
	},
	textKey(Key{Name: "ca_file", Help: "PEM CA bundle `file` for mqtts", Path: true}, func(s *Settings) *string { return &s.CAFile }),
	textKey(Key{Name: "cert_file", Help: "PEM client certificate `file` for mqtts", Path: true}, func(s *Settings) *string { return &s.CertFile }),
	textKey(Key{Name: "key_file", Help: "PEM client key `file` for mqtts", Path: true}, func(s *Settings) *string { return &s.KeyFile }),
	{
		Name: "keepalive", Help: fmt.Sprintf("MQTT keep-alive, a `duration` of whole seconds from %v to %v", MinKeepAlive, MaxKeepAlive),
		Default: DefaultKeepAlive.String(),
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
// makes config keys of them; every other candec command, flags.
func Keys() []Key { return append([]Key(nil), keys...) }
