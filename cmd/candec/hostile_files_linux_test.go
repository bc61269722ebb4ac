package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yukart/candec/internal/cmdkit/outformat"
)

// fsizeEnv, in a child run as candec, is the RLIMIT_FSIZE in bytes: a
// write past it fails with EFBIG, as on a full disk. SIGXFSZ, which
// would kill the child instead, is ignored.
const fsizeEnv = "GO_TEST_FSIZE"

func init() {
	childSetup = func() {
		s := os.Getenv(fsizeEnv)
		if s == "" {
			return
		}
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			panic(err)
		}
		signal.Ignore(syscall.SIGXFSZ)
		var lim syscall.Rlimit
		syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim)
		lim.Cur = n
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			panic(err)
		}
	}
}

// sandbox is a test's directory: in/ holds the inputs, out/ the outputs,
// outside/ a file and a directory no command is ever given.
type sandbox struct {
	top, in, out       string
	capture, dbc       string
	precious, otherDir string // outside/precious.txt, outside/dir
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	top := t.TempDir()
	s := &sandbox{top: top, in: filepath.Join(top, "in"), out: filepath.Join(top, "out"),
		precious: filepath.Join(top, "outside", "precious.txt"), otherDir: filepath.Join(top, "outside", "dir")}
	for _, d := range []string{s.in, s.out, s.otherDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Dir(s.precious), "precious.txt", "PRECIOUS\n")
	// The first 3000 frames of the car's capture: enough to pass any
	// file size limit below, quick to decode.
	f, err := os.Open(filepath.Join("..", "..", "testdata", "idle.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b bytes.Buffer
	sc := bufio.NewScanner(f)
	for n := 0; n < 3000 && sc.Scan(); n++ {
		b.Write(sc.Bytes())
		b.WriteByte('\n')
	}
	s.capture = writeFile(t, s.in, "small.log", b.String())
	dbc, err := os.ReadFile(filepath.Join("..", "..", "testdata", "yukart.dbc"))
	if err != nil {
		t.Fatal(err)
	}
	s.dbc = writeFile(t, s.in, "yukart.dbc", string(dbc))
	return s
}

// snapshot describes every path under the sandbox, without following a
// link or opening anything but a regular file.
func (s *sandbox) snapshot(t *testing.T) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(s.top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(s.top, p)
		desc := fi.Mode().String()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			desc += " -> " + target
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += fmt.Sprintf(" %d %x", len(b), sha256.Sum256(b))
		}
		m[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// changed lists the paths that differ between two snapshots.
func changed(before, after map[string]string) []string {
	var ps []string
	for p, d := range after {
		if before[p] != d {
			ps = append(ps, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	return ps
}

// runChild runs candec (this test binary) with args and the file size
// limit fsize (0: none); it returns the exit status and stderr. A child
// that has not ended after 30 s is killed and the test fails: a
// command must never hang on a hostile file.
func runChild(t *testing.T, fsize int, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), asCandecEnv+"=1")
	if fsize > 0 {
		cmd.Env = append(cmd.Env, fsizeEnv+"="+strconv.Itoa(fsize))
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("candec %s hung (killed after 30 s)", strings.Join(args, " "))
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// makeReadOnly makes dir read-only. As a user, chmod 0555; as root,
// who ignores mode bits, a read-only bind mount of dir onto itself, or
// a skip naming why when the system refuses the mount (no
// CAP_SYS_ADMIN, as in many containers).
func makeReadOnly(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		return
	}
	if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("running as root, where mode bits do not stop a write, and a bind mount for a read-only directory is refused: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("running as root, where mode bits do not stop a write, and a read-only remount is refused: %v", err)
	}
}

// fileCommand is a command that writes one file, OUT.
type fileCommand struct {
	name string
	args func(s *sandbox, out string) []string
	ext  string // OUT's extension
}

var fileCommands = []fileCommand{
	{"decode -o", func(s *sandbox, out string) []string {
		return []string{"decode", "--dbc", s.dbc, "-o", out, s.capture}
	}, ".jsonl"},
	{"decode -o parquet", func(s *sandbox, out string) []string {
		return []string{"decode", "--dbc", s.dbc, "--format", "parquet", "-o", out, s.capture}
	}, ".parquet"},
	{"convert", func(s *sandbox, out string) []string {
		return []string{"convert", s.capture, out}
	}, ".log"},
	{"generate", func(s *sandbox, out string) []string {
		return []string{"generate", "--dbc", s.dbc, "--duration", "2s", "-o", out}
	}, ".log"},
	{"plot", func(s *sandbox, out string) []string {
		return []string{"plot", "--dbc", s.dbc, "--signals", "*Speed*", "-o", out, s.capture}
	}, ".svg"},
	{"tune --svg", func(s *sandbox, out string) []string {
		return []string{"tune", "--dbc", s.dbc, "--svg", out, s.capture}
	}, ".svg"},
}

// TestHostileFiles: every command that writes a file, with a link, a
// named pipe, a full disk, a missing directory and a read-only
// directory at the path it writes. It asserts the exit status (0 done,
// 1 failed), that a failure keeps the old file whole and leaves no
// temporary file, and that nothing but the output is written: never the
// file outside that a link points to.
func TestHostileFiles(t *testing.T) {
	const old = "OLD CONTENT\n"
	type row struct {
		name string
		// setup plants what the row is about and returns OUT.
		setup func(t *testing.T, s *sandbox, ext string) string
		fsize int
		want  int      // exit status
		errs  []string // in stderr (failures)
		may   bool     // OUT may change (and nothing else)
	}
	rows := []row{
		{"new file", func(t *testing.T, s *sandbox, ext string) string {
			return filepath.Join(s.out, "o"+ext)
		}, 0, 0, nil, true},
		{"old file replaced", func(t *testing.T, s *sandbox, ext string) string {
			return writeFile(t, s.out, "o"+ext, old)
		}, 0, 0, nil, true},
		{"symlink to a file outside", func(t *testing.T, s *sandbox, ext string) string {
			// The link is replaced; the file it points to is never written.
			p := filepath.Join(s.out, "o"+ext)
			if err := os.Symlink(s.precious, p); err != nil {
				t.Fatal(err)
			}
			return p
		}, 0, 0, nil, true},
		{"dangling symlink out", func(t *testing.T, s *sandbox, ext string) string {
			p := filepath.Join(s.out, "o"+ext)
			if err := os.Symlink(filepath.Join(s.otherDir, "new"), p); err != nil {
				t.Fatal(err)
			}
			return p
		}, 0, 0, nil, true},
		{"named pipe with no reader", func(t *testing.T, s *sandbox, ext string) string {
			p := filepath.Join(s.out, "o"+ext)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}, 0, 1, []string{"is a named pipe with no reader"}, false},
		{"full disk", func(t *testing.T, s *sandbox, ext string) string {
			return writeFile(t, s.out, "o"+ext, old)
		}, 8192, 1, []string{"write {out}: file too large"}, false},
		{"missing directory", func(t *testing.T, s *sandbox, ext string) string {
			return filepath.Join(s.out, "missing", "o"+ext)
		}, 0, 1, []string{"{out}: the directory {dir} does not exist"}, false},
		{"read-only directory", func(t *testing.T, s *sandbox, ext string) string {
			ro := filepath.Join(s.out, "ro")
			os.Mkdir(ro, 0o755)
			p := writeFile(t, ro, "o"+ext, old)
			makeReadOnly(t, ro)
			return p
		}, 0, 1, nil, false},
	}
	for _, c := range fileCommands {
		for _, r := range rows {
			t.Run(c.name+"/"+r.name, func(t *testing.T) {
				s := newSandbox(t)
				out := r.setup(t, s, c.ext)
				before := s.snapshot(t)
				code, stderr := runChild(t, r.fsize, c.args(s, out)...)
				if code != r.want {
					t.Errorf("exit status %d, want %d; stderr:\n%s", code, r.want, stderr)
				}
				for _, e := range r.errs {
					// An output error names the output, as such.
					e = strings.ReplaceAll(strings.ReplaceAll(e, "{out}", out), "{dir}", filepath.Dir(out))
					if !strings.Contains(stderr, e) {
						t.Errorf("stderr %q, want %q in it", stderr, e)
					}
				}
				temp := filepath.Join(filepath.Dir(out), "."+filepath.Base(out)) // renameio's
				if r.want != 0 && (strings.Contains(stderr, ".tmp") || strings.Contains(stderr, temp) || strings.Contains(stderr, "frames from") || strings.Contains(stderr, "stopped after")) {
					t.Errorf("stderr %q names a temporary file or claims frames written", stderr)
				}
				rel, _ := filepath.Rel(s.top, out)
				got := changed(before, s.snapshot(t))
				switch {
				case r.may && !slices.Equal(got, []string{rel}):
					t.Errorf("changed %q, want only %s", got, rel)
				case !r.may && len(got) > 0:
					t.Errorf("changed %q, want nothing (the old file kept, no temporary file)", got)
				}
			})
		}
	}
}

// TestHostileLakeFiles: decode --out-dir with a link or a named pipe
// planted in the lake, a full disk, a missing and a read-only
// directory. A link or a pipe is refused with exit status 1, naming it,
// without a wait; nothing outside the lake is written or truncated; a
// failure leaves the lake as it was.
func TestHostileLakeFiles(t *testing.T) {
	if _, ok := outformat.LakeFormat(); !ok {
		t.Skip("no format of this build writes a lake")
	}
	type row struct {
		name  string
		setup func(t *testing.T, s *sandbox, lake string) string // returns the lake dir to give
		fsize int
		want  int
		errs  []string
		may   string // the lake may change (a prefix); "": nothing may
	}
	// made is a lake made by a first run, with one file per message.
	made := func(t *testing.T, s *sandbox, lake string) {
		t.Helper()
		if code, stderr := runChild(t, 0, "decode", "--dbc", s.dbc, "--out-dir", lake, s.capture); code != 0 {
			t.Fatalf("the first run: exit status %d: %s", code, stderr)
		}
	}
	firstFile := func(t *testing.T, lake string) string {
		t.Helper()
		files, _ := filepath.Glob(filepath.Join(lake, "message=*", "date=*", "*.parquet"))
		if len(files) == 0 {
			t.Fatal("the first run made no file")
		}
		return files[0]
	}
	plantLink := func(t *testing.T, target, at string) {
		t.Helper()
		if err := os.RemoveAll(at); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, at); err != nil {
			t.Fatal(err)
		}
	}
	rows := []row{
		{"new lake", func(t *testing.T, s *sandbox, lake string) string { return lake }, 0, 0, nil, "out/lake"},
		{"re-run", func(t *testing.T, s *sandbox, lake string) string { made(t, s, lake); return lake }, 0, 0, nil, "out/lake"},
		{"missing directory", func(t *testing.T, s *sandbox, lake string) string {
			return filepath.Join(s.out, "missing", "lake") // made, as mkdir -p
		}, 0, 0, nil, "out/missing"},
		{"lock is a symlink out", func(t *testing.T, s *sandbox, lake string) string {
			made(t, s, lake)
			plantLink(t, s.precious, filepath.Join(lake, "_candec_lake.lock"))
			return lake
		}, 0, 1, []string{"a symbolic link in the lake", "_candec_lake.lock"}, ""},
		{"lock is a named pipe", func(t *testing.T, s *sandbox, lake string) string {
			made(t, s, lake)
			os.Remove(filepath.Join(lake, "_candec_lake.lock"))
			syscall.Mkfifo(filepath.Join(lake, "_candec_lake.lock"), 0o644)
			return lake
		}, 0, 1, []string{"not a regular file", "_candec_lake.lock"}, ""},
		{"marker is a named pipe", func(t *testing.T, s *sandbox, lake string) string {
			made(t, s, lake)
			os.Remove(filepath.Join(lake, "_candec_lake.json"))
			syscall.Mkfifo(filepath.Join(lake, "_candec_lake.json"), 0o644)
			return lake
		}, 0, 1, []string{"not a regular file", "_candec_lake.json"}, ""},
		{"message directory is a symlink out", func(t *testing.T, s *sandbox, lake string) string {
			made(t, s, lake)
			plantLink(t, s.otherDir, filepath.Dir(filepath.Dir(firstFile(t, lake))))
			return lake
		}, 0, 1, []string{"a symbolic link in the lake", "message="}, ""},
		{"date directory is a symlink out", func(t *testing.T, s *sandbox, lake string) string {
			made(t, s, lake)
			plantLink(t, s.otherDir, filepath.Dir(firstFile(t, lake)))
			return lake
		}, 0, 1, []string{"a symbolic link in the lake", "date="}, ""},
		{"output file is a symlink out", func(t *testing.T, s *sandbox, lake string) string {
			made(t, s, lake)
			plantLink(t, s.precious, firstFile(t, lake))
			return lake
		}, 0, 1, []string{"a symbolic link in the lake", ".parquet"}, ""},
		{"full disk", func(t *testing.T, s *sandbox, lake string) string {
			made(t, s, lake)
			return lake
		}, 2048, 1, []string{"file too large"}, ""},
		{"read-only directory", func(t *testing.T, s *sandbox, lake string) string {
			made(t, s, lake)
			makeReadOnly(t, lake)
			return lake
		}, 0, 1, nil, ""},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			s := newSandbox(t)
			lake := r.setup(t, s, filepath.Join(s.out, "lake"))
			before := s.snapshot(t)
			code, stderr := runChild(t, r.fsize, "decode", "--dbc", s.dbc, "--out-dir", lake, s.capture)
			if code != r.want {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, r.want, stderr)
			}
			for _, e := range r.errs {
				if !strings.Contains(stderr, e) {
					t.Errorf("stderr %q, want %q in it", stderr, e)
				}
			}
			for _, p := range changed(before, s.snapshot(t)) {
				if r.may == "" || !strings.HasPrefix(p, r.may) {
					t.Errorf("%s changed, want %s", p, map[bool]string{true: "nothing changed", false: "only " + r.may + " changed"}[r.may == ""])
				}
			}
		})
	}
}
