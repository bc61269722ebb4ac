package cli

import (
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/term"
)

// The helpers every command's flags use: range checks that name the flag
// and exit with status 2, lists, and whether an output is a terminal.

// DBCHelp is the help of every --dbc flag (a dbc.BusFiles).
const DBCHelp = "DBC `[IFACE=]FILE[,FILE]`: for every interface, or with IFACE= for that interface alone, whose frames no other DBC decodes (can0=pt.dbc,can1=adas.dbc; repeatable)"

// FirstError returns the first non-nil error.
func FirstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// DurationIn checks that a duration flag is in [lo, hi].
func DurationIn(cmd, flag string, v, lo, hi time.Duration) error {
	if v < lo || v > hi {
		return &ExitError{2, fmt.Errorf("%s: %s must be between %v and %v, got %v", cmd, flag, lo, hi, v)}
	}
	return nil
}

// DurationAtLeast checks that a duration flag is at least lo.
func DurationAtLeast(cmd, flag string, v, lo time.Duration) error {
	if v >= lo {
		return nil
	}
	if lo == 0 {
		return &ExitError{2, fmt.Errorf("%s: %s must not be negative, got %v", cmd, flag, v)}
	}
	return &ExitError{2, fmt.Errorf("%s: %s must be positive, got %v", cmd, flag, v)}
}

// FloatIn checks that a number flag is in [lo, hi] (NaN is not).
func FloatIn(cmd, flag string, v, lo, hi float64) error {
	if !(v >= lo && v <= hi) {
		return &ExitError{2, fmt.Errorf("%s: %s must be between %g and %g, got %g", cmd, flag, lo, hi, v)}
	}
	return nil
}

// SplitList splits a comma-separated flag value, dropping blanks.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w any) bool {
	f, ok := FileOf(w)
	return ok && term.IsTerminal(int(f.Fd()))
}

// FileOf returns the file w writes to, if it is one: standard output is
// wrapped by run to check its writes.
func FileOf(w any) (*os.File, bool) {
	if s, ok := w.(*stdoutWriter); ok {
		w = s.w
	}
	f, ok := w.(*os.File)
	return f, ok
}
