//go:build linux

package lake

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestOwnerOpenOnce: one owner's name is one writer at a time. A second
// Open with the same owner (two ingest instances given one --id) is
// refused with ErrBusy naming the owner, while owners of other names
// share the lake; once the first closes, the name is free again.
func TestOwnerOpenOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lake")
	open := func(owner string) (*Lake, error) {
		return Open(Config{Dir: dir, DBC: "sha256:1", Owner: owner})
	}
	a, err := open("a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := open("a"); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), `"a"`) {
		t.Errorf("a second Open of owner a: got %v, want ErrBusy naming the owner", err)
	}
	b, err := open("b")
	if err != nil {
		t.Fatalf("owner b beside owner a: %v", err)
	}
	b.Close()
	a.Close()
	a2, err := open("a")
	if err != nil {
		t.Fatalf("owner a again after its Close: %v", err)
	}
	a2.Close()
}
