// Command package builds candec's Debian package from the car's candec
// binary and nfpm.yaml, with nfpm (github.com/goreleaser/nfpm/v2). It
// is a module of its own so that nfpm's dependencies stay out of
// candec's. The package installs the car's binary (go build
// ./cmd/candec-car) as /usr/bin/candec (see the README).
//
//	go run . -binary ../../dist/linux-arm64/candec -arch arm64 -out ../../dist
//
// The package version is the binary's, as `candec version` reports it
// (its Go build info): a release tag such as v1.2.0 gives 1.2.0; a
// commit gives 0.0.0~git<commit time>.<revision>, so that later commits
// sort later; a modified tree adds +dirty. A binary that recorded no
// revision (built outside a git checkout, or with -buildvcs=false) gets
// the source tree's git revision, and -version overrides all of them.
package main

import (
	"debug/buildinfo"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/deb" // registers the deb packager
	"golang.org/x/mod/semver"
)

// Errors.
var (
	// errArch: -arch is not one the car or the CI builds.
	errArch = errors.New("package: -arch must be amd64 or arm64")
	// errNoVersion: neither the binary nor git names a version.
	errNoVersion = errors.New("package: the binary has no version or revision and git names none; give -version")
)

// options says what to package.
type options struct {
	config  string // nfpm.yaml
	binary  string // the car's candec binary for arch (cmd/candec-car)
	arch    string // Debian architecture: amd64, arm64
	version string // "" to take the binary's
	out     string // directory for the .deb
}

func main() {
	var o options
	flag.StringVar(&o.config, "config", "nfpm.yaml", "nfpm `file`; its sources are relative to its folder")
	flag.StringVar(&o.binary, "binary", "", "the car's candec `binary` built for -arch: go build ./cmd/candec-car (required)")
	flag.StringVar(&o.arch, "arch", "amd64", "Debian `architecture`: amd64 or arm64")
	flag.StringVar(&o.version, "version", "", "package `version` (default: the binary's)")
	flag.StringVar(&o.out, "out", ".", "`directory` for the .deb")
	flag.Parse()
	if o.binary == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	path, err := build(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(path)
}

// build writes the .deb into o.out and returns its path.
func build(o options) (string, error) {
	if o.arch != "amd64" && o.arch != "arm64" {
		return "", fmt.Errorf("%w, not %q", errArch, o.arch)
	}
	var err error
	for _, p := range []*string{&o.config, &o.binary, &o.out} {
		if *p, err = filepath.Abs(*p); err != nil {
			return "", err
		}
	}
	if o.version == "" {
		if o.version, err = binaryVersion(o.binary, filepath.Dir(o.config)); err != nil {
			return "", err
		}
	}
	vars := map[string]string{"ARCH": o.arch, "VERSION": o.version, "BINARY": o.binary}
	cfg, err := nfpm.ParseFileWithEnvMapping(o.config, func(k string) string { return vars[k] })
	if err != nil {
		return "", fmt.Errorf("package: %s: %w", o.config, err)
	}
	info, err := cfg.Get("deb")
	if err != nil {
		return "", fmt.Errorf("package: %s: %w", o.config, err)
	}
	// The sources are named relative to the config's folder; nfpm reads
	// them relative to the working directory.
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	if err := os.Chdir(filepath.Dir(o.config)); err != nil {
		return "", err
	}
	defer os.Chdir(wd)
	info = nfpm.WithDefaults(info)
	if err := nfpm.PrepareForPackager(info, "deb"); err != nil {
		return "", fmt.Errorf("package: %s: %w", o.config, err)
	}
	pkg, err := nfpm.Get("deb")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return "", err
	}
	target := filepath.Join(o.out, pkg.ConventionalFileName(info))
	info.Target = target
	f, err := os.Create(target)
	if err != nil {
		return "", err
	}
	if err := pkg.Package(info, f); err != nil {
		f.Close()
		os.Remove(target)
		return "", fmt.Errorf("package: deb: %w", err)
	}
	return target, f.Close()
}

// binaryVersion is the Debian version of the candec binary at path (see
// the package documentation); src is a folder of the source tree, for
// git.
func binaryVersion(path, src string) (string, error) {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("package: %s: %w", path, err)
	}
	var rev, at string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if v := bi.Main.Version; semver.IsValid(v) && semver.Prerelease(v) == "" && semver.Build(v) == "" {
		return strings.TrimPrefix(v, "v"), nil // a release tag
	}
	if rev == "" {
		if rev, at, err = gitRevision(src); err != nil {
			return "", err
		}
	}
	t, err := time.Parse(time.RFC3339, at)
	if err != nil {
		return "", fmt.Errorf("package: %s: commit time %q: %w", path, at, err)
	}
	v := fmt.Sprintf("0.0.0~git%s.%s", t.UTC().Format("20060102150405"), rev[:min(12, len(rev))])
	if dirty {
		v += "+dirty"
	}
	return v, nil
}

// gitRevision returns HEAD's revision and commit time in dir's checkout.
func gitRevision(dir string) (rev, at string, err error) {
	out, err := exec.Command("git", "-C", dir, "log", "-1", "--format=%H %cI").Output()
	if err != nil {
		return "", "", errNoVersion
	}
	rev, at, ok := strings.Cut(strings.TrimSpace(string(out)), " ")
	if !ok {
		return "", "", errNoVersion
	}
	return rev, at, nil
}
