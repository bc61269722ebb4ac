package brokerflags

import (
	"errors"
	"flag"
	"strings"

	"github.com/yukart/candec/internal/base/flagenv"
	"github.com/yukart/candec/mqttclient"
)

// Flags are a command's connection flags, defined by AddFlags.
type Flags struct {
	keys  []mqttclient.Key
	def   mqttclient.Settings
	given []given // in command-line order
}

// given is one value of a key, from a flag or a variable.
type given struct {
	where string
	key   mqttclient.Key
	value string
}

// AddFlags defines the connection flags on fs: --broker, --client-id,
// --username, --ca-file, --cert-file, --key-file and --keepalive, each
// showing def's value as its default. A value a flag cannot take
// (--keepalive 1x) is refused when fs parses it, naming the flag. The
// password has no flag: it comes from CANDEC_PASSWORD (or the URL).
func AddFlags(fs *flag.FlagSet, def mqttclient.Settings) *Flags {
	return addFlags(fs, def, mqttclient.Keys())
}

// addFlags defines a flag for each key but a secret one, whose variable
// the help of the flag before it names; an own key's help names no
// variable (see Flags.Settings).
func addFlags(fs *flag.FlagSet, def mqttclient.Settings, keys []mqttclient.Key) *Flags {
	f := &Flags{keys: keys, def: def}
	for i, k := range keys {
		if k.Secret {
			continue
		}
		name, help := flagenv.FlagName(k.Name), k.Help
		if !k.Own {
			env := "env " + flagenv.EnvName(k.Name)
			if i+1 < len(keys) && keys[i+1].Secret {
				env += "; the " + keys[i+1].Name + " comes from " + flagenv.EnvName(keys[i+1].Name)
			}
			help += " (" + env + ")"
		}
		fs.Var(&flagenv.Value{Default: k.Get(&def), Record: func(v string) error {
			var scratch mqttclient.Settings
			if err := k.Set(&scratch, v); err != nil {
				return err
			}
			f.given = append(f.given, given{where: "--" + name, key: k, value: v})
			return nil
		}}, name, help)
	}
	return f
}

// Settings returns the defaults given to AddFlags, overridden by the
// settings' variables in environ (os.Environ's form: CANDEC_BROKER, …,
// CANDEC_PASSWORD; not CANDEC_CLIENT_ID, which is `candec run`'s),
// overridden by the flags given. When the broker URL is not empty the
// result is validated; an empty one is left to the caller (demo and
// bench then start their own broker). Every error is a
// *mqttclient.SettingError naming the flag or the variable.
func (f *Flags) Settings(environ []string) (mqttclient.Settings, error) {
	s := f.def
	where := map[string]string{}
	for _, g := range append(f.envGiven(environ), f.given...) {
		if err := g.key.Set(&s, g.value); err != nil {
			return mqttclient.Settings{}, &mqttclient.SettingError{Where: g.where, Key: g.key.Name, Msg: err.Error(), Err: mqttclient.ErrSettings}
		}
		where[g.key.Name] = g.where
	}
	if s.Broker == "" {
		return s, nil
	}
	if err := s.Validate(); err != nil {
		var se *mqttclient.SettingError
		if errors.As(err, &se) {
			if se.Where = where[se.Key]; se.Where == "" {
				se.Where = "--" + flagenv.FlagName(se.Key)
			}
		}
		return mqttclient.Settings{}, err
	}
	return s, nil
}

// Given reports whether a flag set key.
func (f *Flags) Given(key string) bool {
	for _, g := range f.given {
		if g.key.Name == key {
			return true
		}
	}
	return false
}

// envGiven returns the values of the settings' variables in environ,
// but an own key's (CANDEC_CLIENT_ID): exported for `candec run`, it
// would give a watch or a replay the decoder's id, and the broker would
// hand them the decoder's session, disconnecting it.
func (f *Flags) envGiven(environ []string) []given {
	var out []given
	for _, kv := range environ {
		name, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, flagenv.EnvPrefix) {
			continue
		}
		for _, k := range f.keys {
			if !k.Own && flagenv.EnvName(k.Name) == name {
				out = append(out, given{where: name, key: k, value: v})
			}
		}
	}
	return out
}

// Args returns the flags that give a candec command the settings s,
// except the client id (each process has its own) and the password,
// which the command reads from CANDEC_PASSWORD: a command line is
// visible to every user of the machine.
func Args(s mqttclient.Settings) []string { return args(s, mqttclient.Keys()) }

func args(s mqttclient.Settings, keys []mqttclient.Key) []string {
	var out []string
	for _, k := range keys {
		if k.Secret || k.Own {
			continue
		}
		if v := k.Get(&s); v != "" {
			out = append(out, "--"+flagenv.FlagName(k.Name), v)
		}
	}
	return out
}
