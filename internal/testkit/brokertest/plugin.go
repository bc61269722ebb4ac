package brokertest

import (
	"cmp"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BuildPlugin compiles the mosquitto plugin whose C source is src (a
// single file, against Debian's mosquitto-dev headers) into the test's
// temporary directory and returns the path of the shared object. The
// compiler is $CC, or cc. Without a compiler or the headers the test
// is skipped, or fails when RequireEnv is 1: a broker configured with
// the plugin cannot start without it.
func BuildPlugin(t testing.TB, src string) string {
	t.Helper()
	cc, err := exec.LookPath(cmp.Or(os.Getenv("CC"), "cc"))
	if err != nil {
		missing(t, "a C compiler (cc) for the mosquitto plugin")
	}
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), ".c")+".so")
	cmd := exec.Command(cc, "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-o", out, src)
	b, err := cmd.CombinedOutput()
	switch {
	case err != nil && strings.Contains(string(b), "mosquitto_broker.h"):
		missing(t, "mosquitto_broker.h (install the Debian package mosquitto-dev)")
	case err != nil:
		t.Fatalf("brokertest: building the plugin %s: %v\n%s", src, err, b)
	case len(b) > 0:
		t.Errorf("brokertest: the plugin %s builds with warnings:\n%s", src, b)
	}
	return out
}

// FleetConf returns the global settings of the fleet broker's
// configuration file conf (deploy/mosquitto/fleet.conf): its lines
// before the first listener, without comments, acl_file and
// allow_anonymous (mosquitto.Options set those), with the plugin at
// plugin (built by BuildPlugin) and, when readers is not nil, the
// plugin's readers replaced by readers.
func FleetConf(t testing.TB, conf, plugin string, readers []string) string {
	t.Helper()
	b, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		key, _, _ := strings.Cut(l, " ")
		switch {
		case key == "listener":
			return strings.Join(out, "\n") + "\n"
		case key == "" || strings.HasPrefix(key, "#") || key == "acl_file" || key == "allow_anonymous":
		case key == "plugin":
			out = append(out, "plugin "+plugin)
		case key == "plugin_opt_readers" && readers != nil:
			out = append(out, "plugin_opt_readers "+strings.Join(readers, " "))
		default:
			out = append(out, l)
		}
	}
	t.Fatalf("brokertest: %s has no listener", conf)
	return ""
}
