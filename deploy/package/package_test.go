package main

import (
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// root is the candec source tree.
var root = filepath.Join("..", "..")

// buildCandec cross-builds the car's candec (-tags car) for linux/arch as
// `task package` does.
func buildCandec(t *testing.T, arch string) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build candec")
	}
	exe := filepath.Join(t.TempDir(), "candec")
	cmd := exec.Command("go", "build", "-tags", "car", "-buildvcs=auto", "-o", exe, "./cmd/candec")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build GOARCH=%s: %v\n%s", arch, err, out)
	}
	return exe
}

func needDpkg(t *testing.T) {
	t.Helper()
	for _, c := range []string{"dpkg", "dpkg-deb"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("%s not installed (Debian package dpkg): the package is not checked", c)
		}
	}
}

func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr)
	}
	return out
}

// field returns a control file field's value.
func field(control []byte, name string) string {
	for l := range strings.SplitSeq(string(control), "\n") {
		if v, ok := strings.CutPrefix(l, name+": "); ok {
			return v
		}
	}
	return ""
}

// TestDebAmd64 builds the amd64 package, unpacks it into a scratch root
// with dpkg -x (nothing is installed on the machine), checks its control
// fields, conffiles and files, runs the installed `candec version`, and
// verifies the installed unit with systemd-analyze.
func TestDebAmd64(t *testing.T) {
	needDpkg(t)
	exe := buildCandec(t, "amd64")
	deb, err := build(options{config: "nfpm.yaml", binary: exe, arch: "amd64", out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	version, err := binaryVersion(exe, ".")
	if err != nil {
		t.Fatal(err)
	}

	control := run(t, "dpkg-deb", "-f", deb)
	for _, f := range []struct{ name, want string }{
		{"Package", "candec"},
		{"Architecture", "amd64"},
		{"Version", version},
	} {
		if got := field(control, f.name); got != f.want {
			t.Errorf("%s: got %q, want %q", f.name, got, f.want)
		}
	}
	ctrl := t.TempDir()
	run(t, "dpkg-deb", "-e", deb, ctrl)
	conffiles, err := os.ReadFile(filepath.Join(ctrl, "conffiles"))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(string(conffiles))
	slices.Sort(got)
	if want := []string{"/etc/candec/candec.yaml", "/etc/candec/policy.yaml"}; !slices.Equal(got, want) {
		t.Errorf("conffiles: got %q, want %q", got, want)
	}

	dest := t.TempDir()
	run(t, "dpkg", "-x", deb, dest)
	for _, f := range []struct {
		path string
		mode os.FileMode
		src  string // the file it must equal, "" for the binary
	}{
		{"/usr/bin/candec", 0o755, ""},
		{"/lib/systemd/system/candec.service", 0o644, "../systemd/candec.service"},
		{"/etc/candec/candec.yaml", 0o644, "candec.yaml"},
		{"/etc/candec/policy.yaml", 0o644, "../../pipeline/default_policy.yaml"},
		{"/usr/share/candec/yukart.dbc", 0o644, "../../testdata/yukart.dbc"},
		{"/usr/share/candec/mosquitto/candec.conf", 0o644, "../mosquitto/candec.conf"},
		{"/usr/share/candec/mosquitto/acl", 0o644, "../mosquitto/acl"},
	} {
		fi, err := os.Stat(filepath.Join(dest, f.path))
		if err != nil {
			t.Errorf("installed: %v", err)
			continue
		}
		if fi.Mode().Perm() != f.mode {
			t.Errorf("%s: mode %v, want %v", f.path, fi.Mode().Perm(), f.mode)
		}
		if f.src == "" {
			continue
		}
		got, err1 := os.ReadFile(filepath.Join(dest, f.path))
		want, err2 := os.ReadFile(f.src)
		if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is not %s as shipped (%v, %v)", f.path, f.src, err1, err2)
		}
	}

	installed := filepath.Join(dest, "usr", "bin", "candec")
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("an amd64 binary does not run on %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	out := string(run(t, installed, "version"))
	if !strings.HasPrefix(out, "candec ") || !strings.Contains(out, "module github.com/yukart/candec\n") {
		t.Errorf("installed candec version:\n%s\nwant candec's version", out)
	}
	if rev := revisionIn(out); rev != "" && !strings.Contains(version, rev[:12]) {
		t.Errorf("package version %s does not name the binary's revision %s", version, rev)
	}

	// The package holds the car's build: the developer's commands are
	// not in it, and it says so.
	for _, c := range []string{"bench", "demo", "plot", "tune"} {
		cmd := exec.Command(installed, c)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), c+" is not in this build") {
			t.Errorf("installed candec %s: got %v, %q; want exit status 2 and %q (the car's build)", c, err, stderr.String(), c+" is not in this build")
		}
	}

	// The shipped policy and DBC load in the installed binary.
	capture := filepath.Join(root, "testdata", "idle.log")
	run(t, installed, "decode", "--dbc", filepath.Join(dest, "usr/share/candec/yukart.dbc"),
		"--policy", filepath.Join(dest, "etc/candec/policy.yaml"), "-o", os.DevNull, capture)

	// The unit as installed, pointing at the installed binary.
	if analyze, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Log("systemd-analyze not installed: the installed unit is not verified")
	} else {
		unit, err := os.ReadFile(filepath.Join(dest, "lib/systemd/system/candec.service"))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "candec.service")
		text := strings.ReplaceAll(string(unit), "ExecStart=/usr/bin/candec ", "ExecStart="+installed+" ")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(analyze, "verify", p).CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("systemd-analyze verify: %v\n%s", err, out)
		}
	}
}

// revisionIn returns the revision `candec version` printed, if any.
func revisionIn(version string) string {
	for l := range strings.SplitSeq(version, "\n") {
		if r, ok := strings.CutPrefix(l, "revision "); ok {
			r, _, _ = strings.Cut(r, " ")
			return r
		}
	}
	return ""
}

// TestDebArm64 builds the car's package: an arm64 control file around an
// AArch64 binary.
func TestDebArm64(t *testing.T) {
	needDpkg(t)
	exe := buildCandec(t, "arm64")
	deb, err := build(options{config: "nfpm.yaml", binary: exe, arch: "arm64", out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if got := field(run(t, "dpkg-deb", "-f", deb), "Architecture"); got != "arm64" {
		t.Errorf("Architecture: got %q, want arm64", got)
	}
	dest := t.TempDir()
	run(t, "dpkg", "-x", deb, dest)
	f, err := elf.Open(filepath.Join(dest, "usr", "bin", "candec"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != elf.EM_AARCH64 {
		t.Errorf("/usr/bin/candec: machine %v, want %v", f.Machine, elf.EM_AARCH64)
	}
}

// TestBuildRejectsArch: only the two architectures candec ships.
func TestBuildRejectsArch(t *testing.T) {
	if _, err := build(options{config: "nfpm.yaml", binary: "candec", arch: "i386", out: t.TempDir()}); !errors.Is(err, errArch) {
		t.Errorf("build -arch i386: got %v, want %v", err, errArch)
	}
}
