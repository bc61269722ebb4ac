package flagenv

import "strings"

// EnvPrefix starts the environment variable of every setting:
// CANDEC_BROKER sets broker, CANDEC_PASSWORD sets password.
const EnvPrefix = "CANDEC_"

// FlagName returns the flag of a key: "client_id" is --client-id.
func FlagName(key string) string { return strings.ReplaceAll(key, "_", "-") }

// EnvName returns the environment variable of a key: "client_id" is
// CANDEC_CLIENT_ID.
func EnvName(key string) string { return EnvPrefix + strings.ToUpper(key) }

// Value is a setting's flag: Record checks and records what the command
// line sets, in order, for the caller to apply over the file and the
// environment; the help shows Default (the flag package prints the
// default when it differs from the String of a zero Value, "").
type Value struct {
	// Default is the setting's value before the command line, as text.
	Default string
	// Record is called with each value the command line gives; its
	// error refuses the value, and the flag package names the flag.
	Record func(string) error
}

// String returns the default, shown in the help.
func (v *Value) String() string {
	if v == nil {
		return ""
	}
	return v.Default
}

// Set calls Record.
func (v *Value) Set(s string) error { return v.Record(s) }
