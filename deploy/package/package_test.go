package main

import (
	"bytes"
	"debug/elf"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// root is the candec source tree.
var root = filepath.Join("..", "..")

// buildCandec cross-builds the package's binary for linux/arch as
// `task package` does: the car's candec (./cmd/candec-car).
func buildCandec(t *testing.T, arch string) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build candec")
	}
	exe := filepath.Join(t.TempDir(), "candec")
	cmd := exec.Command("go", "build", "-buildvcs=auto", "-o", exe, "./cmd/candec-car")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/candec-car GOARCH=%s: %v\n%s", arch, err, out)
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
		src  string // the file it must equal, "" for a binary
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

	// The package holds the car's binary alone: the developer's
	// commands are unknown to it.
	if _, err := os.Stat(filepath.Join(dest, "usr", "bin", "candec-mqtt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("/usr/bin/candec-mqtt: got %v, want no such file (one binary)", err)
	}
	for _, c := range []string{"bench", "demo", "plot", "tune", "ingest"} {
		code, stderr := exitOf(t, exec.Command(installed, c))
		if code != 2 || !strings.Contains(stderr, `unknown command "`+c+`"`) {
			t.Errorf("installed candec %s: got exit status %d, %q; want 2 and an unknown command (the car's binary)", c, code, stderr)
		}
	}

	// The shipped policy and DBC load in the installed binary.
	capture := filepath.Join(root, "testdata", "idle.log")
	run(t, installed, "decode", "--dbc", filepath.Join(dest, "usr/share/candec/yukart.dbc"),
		"--policy", filepath.Join(dest, "etc/candec/policy.yaml"), "-o", os.DevNull, capture)

	checkCarCommands(t, installed)

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

// checkCarCommands checks that the installed candec runs the car's
// broker commands itself: run's help and replay's flag errors, and a
// watch that waits for a broker, which its own signal handler stops on
// SIGTERM.
func checkCarCommands(t *testing.T, installed string) {
	t.Helper()
	if out := string(run(t, installed, "run", "-h")); !strings.HasPrefix(out, "Usage: candec run ") || !strings.Contains(out, "-config") {
		t.Errorf("installed candec run -h:\n%s\nwant run's help", out)
	}
	code, stderr := exitOf(t, exec.Command(installed, "replay", "--no-such-flag"))
	if code != 2 || !strings.Contains(stderr, "replay: flag provided but not defined: -no-such-flag") {
		t.Errorf("installed candec replay --no-such-flag: got exit status %d, %q; want 2 and the flag named", code, stderr)
	}

	// A watch that waits for a broker that does not answer. The signal
	// goes once the watch has connected, which it does after it set up
	// its signal handling (sent sooner, it would find the Go runtime's
	// default, which dies of it).
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	broker := "mqtt://" + l.Addr().String()
	watch := exec.Command(installed, "watch", "--broker", broker, "--connect-timeout", "1m")
	var werr bytes.Buffer
	watch.Stderr = &werr
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	_ = l.(*net.TCPListener).SetDeadline(time.Now().Add(20 * time.Second))
	c, err := l.Accept()
	if err != nil {
		_ = watch.Process.Kill()
		t.Fatalf("installed candec watch never connected to %s: %v", broker, err)
	}
	defer c.Close()
	if err := watch.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = watch.Wait()
	if !watch.ProcessState.Exited() || !strings.Contains(werr.String(), "watch: stopped before") {
		t.Errorf("installed candec watch, SIGTERM: got %v, %q; want its handler to stop it", err, werr.String())
	}
}

// exitOf runs cmd and returns its exit status and standard error.
func exitOf(t *testing.T, cmd *exec.Cmd) (int, string) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s: %v", cmd, err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
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
	for _, b := range []string{"candec"} {
		f, err := elf.Open(filepath.Join(dest, "usr", "bin", b))
		if err != nil {
			t.Fatal(err)
		}
		if f.Machine != elf.EM_AARCH64 {
			t.Errorf("/usr/bin/%s: machine %v, want %v", b, f.Machine, elf.EM_AARCH64)
		}
		f.Close()
	}
}

// TestBuildRejectsArch: only the two architectures candec ships.
func TestBuildRejectsArch(t *testing.T) {
	if _, err := build(options{config: "nfpm.yaml", binary: "candec", arch: "i386", out: t.TempDir()}); !errors.Is(err, errArch) {
		t.Errorf("build -arch i386: got %v, want %v", err, errArch)
	}
}
