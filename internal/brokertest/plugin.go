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
