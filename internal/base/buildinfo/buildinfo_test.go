package buildinfo

import (
	"strings"
	"testing"
)

func TestBuildShort(t *testing.T) {
	tests := []struct {
		b    Build
		want string
	}{
		{Build{Version: "v1.2.0"}, "v1.2.0"},
		{Build{Version: "v0.0.0-20261203061500-9ff5c51abcde+dirty", Revision: "9ff5c51abcdef0123"}, "v0.0.0-20261203061500-9ff5c51abcde+dirty"},
		{Build{Revision: "9ff5c51abcdef0123456"}, "9ff5c51abcde"},
		{Build{Revision: "9ff5c51abcdef0123456", Modified: true}, "9ff5c51abcde+dirty"},
		{Build{Revision: "abc"}, "abc"},
		{Build{}, "devel"},
	}
	for _, tt := range tests {
		if got := tt.b.Short(); got != tt.want {
			t.Errorf("%+v: got %q, want %q", tt.b, got, tt.want)
		}
	}
}

func TestBuildString(t *testing.T) {
	b := Build{Module: "github.com/yukart/candec", Revision: "9ff5c51abcdef0123456", Time: "2026-12-03T06:15:00Z", Modified: true, Go: "go1.26.8", Platform: "linux/arm64"}
	want := "candec 9ff5c51abcde+dirty\nmodule github.com/yukart/candec\nrevision 9ff5c51abcdef0123456 (2026-12-03T06:15:00Z, modified)\ngo go1.26.8 linux/arm64\n"
	if got := b.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := Read(); got.Go == "" || !strings.Contains(got.String(), got.Go) {
		t.Errorf("Read: got %+v, want the Go version at least", got)
	}
}
