package capture

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMF4Formats compares every MF4 file of the formats folder with its
// expected frames.
func TestMF4Formats(t *testing.T) {
	dir := formatsDir(t)
	n := 0
	for _, r := range formatIndex(t, dir) {
		if !strings.HasPrefix(r.format, "ASAM MDF 4") || strings.HasSuffix(r.file, ".gz") {
			continue
		}
		n++
		t.Run(r.file, func(t *testing.T) {
			in, err := os.Open(filepath.Join(dir, r.file))
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			head := make([]byte, 4096)
			k, _ := in.ReadAt(head, 0)
			if !detectMF4(head[:k]) {
				t.Fatalf("detectMF4: got false, want true")
			}
			want, err := os.Open(filepath.Join(dir, r.expected))
			if err != nil {
				t.Fatal(err)
			}
			defer want.Close()
			src := NewMF4Reader(in, Options{})
			defer src.Close()
			frames, errs := compareFrames(t, r.file, src, want, time.Microsecond)
			if frames != r.frames || errs != r.errorFrames {
				t.Errorf("got %d frames and %d error frames, want %d and %d", frames, errs, r.frames, r.errorFrames)
			}
		})
	}
	if n != 4 {
		t.Errorf("got %d MF4 files in INDEX.tsv, want 4", n)
	}
}
