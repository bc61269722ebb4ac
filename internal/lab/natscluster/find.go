package natscluster

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ServerModule is the directory, relative to the repository, of the
// module that pins nats-server.
const ServerModule = "internal/lab/natscluster/natsserver"

// ConfigDir is the directory, relative to the repository, of the
// cluster's configuration.
const ConfigDir = "deploy/nats"

// Find returns the path of nats-server, built by `go tool -n
// nats-server` in the ServerModule of the repository at repo (go caches
// the build: the first takes about 20 s, the next are instant).
func Find(repo string) (string, error) {
	cmd := exec.Command("go", "tool", "-n", "nats-server")
	cmd.Dir = filepath.Join(repo, ServerModule)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%w: go tool -n nats-server in %s: %v\n%s", ErrNoServer, cmd.Dir, err, stderr.Bytes())
	}
	return strings.TrimSpace(string(out)), nil
}

// Repo returns the root of the candec repository that holds dir (the
// first directory up from dir with ConfigDir and ServerModule in it).
func Repo(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if isFile(filepath.Join(d, ConfigDir, ConfigFile)) && isFile(filepath.Join(d, ServerModule, "go.mod")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%w: no candec repository (%s and %s) at or above %s", ErrNoServer, ConfigDir, ServerModule, abs)
		}
	}
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}
