// Package realdata locates the real DBC files and vehicle log that tests
// check candec against. They live beside the repository, not in it, so a
// user's clone has none and the tests that want them skip.
package realdata

import (
	"os"
	"path/filepath"
	"testing"
)

// EnvVar names a directory that overrides the default location.
const EnvVar = "CANDEC_REALDATA"

// Path returns the reference data directory and whether it exists: the
// directory named by CANDEC_REALDATA, or ../shared/realdata beside the
// repository root.
func Path() (string, bool) {
	if d := os.Getenv(EnvVar); d != "" {
		return d, isDir(d)
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			d := filepath.Join(dir, "..", "shared", "realdata")
			return d, isDir(d)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// Dir returns the reference data directory, or skips the test when it is
// absent.
func Dir(t testing.TB) string {
	t.Helper()
	d, ok := Path()
	if !ok {
		t.Skip("reference data not present (set " + EnvVar + " or place it at ../shared/realdata)")
	}
	return d
}

func isDir(d string) bool {
	fi, err := os.Stat(d)
	return err == nil && fi.IsDir()
}
