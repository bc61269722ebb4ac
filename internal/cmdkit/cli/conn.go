package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/eclipse/paho.golang/autopaho"

	"github.com/yukart/candec/internal/base/flagenv"
	"github.com/yukart/candec/internal/cmdkit/brokerflags"
	"github.com/yukart/candec/mqttclient"
)

// Bounds shared by the commands that connect to a broker.
const (
	DefaultConnectTimeout = 10 * time.Second
	MaxConnectTimeout     = 5 * time.Minute
)

// BrokerFlags defines the connection flags every command that reaches a
// broker has (brokerflags.AddFlags): --broker, --client-id, --username,
// --ca-file, --cert-file, --key-file, --keepalive; the password comes
// from CANDEC_PASSWORD.
func BrokerFlags(fs *flag.FlagSet, clientID string) *brokerflags.Flags {
	return brokerflags.AddFlags(fs, mqttclient.DefaultSettings(clientID))
}

// BrokerSettings returns the settings once fs is parsed: the defaults,
// the CANDEC_ variables, the flags. A bad one is exit status 2.
func BrokerSettings(cmd string, f *brokerflags.Flags) (mqttclient.Settings, error) {
	return settingsFrom(cmd, f, os.Environ())
}

func settingsFrom(cmd string, f *brokerflags.Flags, environ []string) (mqttclient.Settings, error) {
	s, err := f.Settings(environ)
	if err != nil {
		return s, &ExitError{2, fmt.Errorf("%s: %w", cmd, err)}
	}
	return s, nil
}

// OwnBrokerFlags defines the connection flags of demo and bench, which
// start a broker of their own unless --broker names one: its default is
// empty, and its help says what it replaces.
func OwnBrokerFlags(fs *flag.FlagSet, clientID, brokerHelp string) *brokerflags.Flags {
	def := mqttclient.DefaultSettings(clientID)
	def.Broker = ""
	f := brokerflags.AddFlags(fs, def)
	fs.Lookup("broker").Usage = brokerHelp + " (env " + flagenv.EnvName("broker") + " does not apply)"
	return f
}

// OwnBrokerSettings returns the settings of demo and bench. CANDEC_BROKER
// does not apply: exported for `candec run`, it would send a demo's
// frames, or a bench's flood, to the car's broker. Without --broker the
// other connection flags, but --client-id, are an error: the command's
// own broker is plain MQTT without passwords.
func OwnBrokerSettings(cmd string, f *brokerflags.Flags) (mqttclient.Settings, error) {
	var environ []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, flagenv.EnvName("broker")+"=") {
			environ = append(environ, kv)
		}
	}
	s, err := settingsFrom(cmd, f, environ)
	if err != nil || s.Broker != "" {
		return s, err
	}
	for _, k := range mqttclient.Keys() {
		if !k.Own && f.Given(k.Name) {
			return s, &ExitError{2, fmt.Errorf("%s: --%s needs --broker: without it %s starts a plain broker of its own", cmd, flagenv.FlagName(k.Name), cmd)}
		}
	}
	return s, nil
}

// disconnect closes a connection cleanly, waiting at most timeout.
func disconnect(cm *autopaho.ConnectionManager, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_ = cm.Disconnect(ctx)
}
