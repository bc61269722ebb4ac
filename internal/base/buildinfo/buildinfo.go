package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Build says what the running binary was built from, as the Go build
// recorded it (runtime/debug.ReadBuildInfo).
type Build struct {
	// Module is the main module's path.
	Module string
	// Version is the module version: a tag, a pseudo-version that names
	// the commit, or "" when the build recorded none.
	Version string
	// Revision is the VCS revision and Time its commit time (RFC 3339);
	// empty when the build recorded none (go test, -buildvcs=false).
	Revision, Time string
	// Modified: the working tree had changes not committed.
	Modified bool
	// Go is the Go version that built the binary.
	Go string
	// Platform is GOOS/GOARCH.
	Platform string
}

// Read returns the running binary's build.
func Read() Build {
	b := Build{Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Module = bi.Main.Path
	if v := bi.Main.Version; v != "(devel)" {
		b.Version = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// Short names the build in one word for results and labels: the module
// version when there is one, else the revision's first 12 digits (with
// "+dirty" for a modified tree), else "devel".
func (b Build) Short() string {
	switch {
	case b.Version != "":
		return b.Version
	case b.Revision != "":
		r := b.Revision[:min(12, len(b.Revision))]
		if b.Modified {
			r += "+dirty"
		}
		return r
	}
	return "devel"
}

// String is what `candec version` prints: the version, then the
// module, the revision and the Go version on lines of their own.
func (b Build) String() string {
	var s strings.Builder
	fmt.Fprintf(&s, "candec %s\n", b.Short())
	if b.Module != "" {
		fmt.Fprintf(&s, "module %s\n", b.Module)
	}
	if b.Revision != "" {
		fmt.Fprintf(&s, "revision %s", b.Revision)
		var notes []string
		if b.Time != "" {
			notes = append(notes, b.Time)
		}
		if b.Modified {
			notes = append(notes, "modified")
		}
		if len(notes) > 0 {
			fmt.Fprintf(&s, " (%s)", strings.Join(notes, ", "))
		}
		s.WriteByte('\n')
	}
	fmt.Fprintf(&s, "go %s %s\n", b.Go, b.Platform)
	return s.String()
}
