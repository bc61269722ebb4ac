package capture

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

func TestCopy(t *testing.T) {
	in := "(1.000000) can0 123#DEADBEEF\n(1.500000) can0 20000080#0000000400000000\n(2.000000) vcan1 00000456##301\n"
	tests := []struct {
		name   string
		in     string
		opts   CopyOptions
		skip   bool
		want   string
		st     CopyStats
		errMsg string
	}{
		{"error frames left out", in, CopyOptions{}, false,
			"(1.000000) can0 123#DEADBEEF\n(2.000000) vcan1 00000456##301\n", CopyStats{Frames: 2, ErrorFrames: 1}, ""},
		{"error frames kept", in, CopyOptions{ErrorFrames: true}, false,
			"(1.000000) can0 123#DEADBEEF\n(1.500000) can0 20000080#0000000400000000\n(2.000000) vcan1 00000456##301\n", CopyStats{Frames: 3}, ""},
		{"bad line: what came before is written", "(1.000000) can0 123#DEADBEEF\n(2.000000) can0 12#00\n", CopyOptions{}, false,
			"(1.000000) can0 123#DEADBEEF\n", CopyStats{Frames: 1}, "line 2: column 17"},
		{"bad line skipped", "(1.000000) can0 123#DEADBEEF\n(2.000000) can0 12#00\n(3.000000) can0 124#\n", CopyOptions{}, true,
			"(1.000000) can0 123#DEADBEEF\n(3.000000) can0 124#\n", CopyStats{Frames: 2, Skipped: 1}, ""},
		{"empty", "", CopyOptions{}, false, "", CopyStats{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := NewSource(strings.NewReader(tt.in), Options{SkipInvalid: tt.skip})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			st, err := Copy(context.Background(), NewWriter(&out), src, tt.opts)
			if tt.errMsg == "" && err != nil || tt.errMsg != "" && (err == nil || !strings.Contains(err.Error(), tt.errMsg)) {
				t.Fatalf("got error %v, want %q", err, tt.errMsg)
			}
			if out.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", out.String(), tt.want)
			}
			if st != tt.st {
				t.Errorf("got %+v, want %+v", st, tt.st)
			}
		})
	}
}

func TestCopyCancelled(t *testing.T) {
	in := strings.Repeat("(1.000000) can0 123#DEADBEEF\n", 10000)
	src, err := NewSource(strings.NewReader(in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	st, err := Copy(ctx, NewWriter(&out), src, CopyOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if st.Frames >= 10000 || int64(strings.Count(out.String(), "\n")) != st.Frames {
		t.Errorf("wrote %d frames (%d lines): want fewer than all, as whole lines", st.Frames, strings.Count(out.String(), "\n"))
	}
}
