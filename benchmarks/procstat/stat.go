package procstat

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// Errors.
var (
	// ErrFormat: a stat line does not have the layout of /proc/<pid>/stat.
	ErrFormat = errors.New("procstat: malformed stat line")
)

// DefaultClockTicks is CLK_TCK where the auxiliary vector cannot be read.
const DefaultClockTicks = 100

// Stat is the part of /proc/<pid>/stat a CPU measurement needs.
type Stat struct {
	// PID is the process ID (field 1).
	PID int
	// Comm is the command name (field 2, without its parentheses). It
	// may contain spaces and parentheses.
	Comm string
	// State is the process state letter (field 3): R, S, Z, ...
	State byte
	// UTime and STime are the clock ticks spent in user and kernel mode
	// (fields 14 and 15).
	UTime, STime uint64
}

// Ticks returns the total CPU time in clock ticks.
func (s Stat) Ticks() uint64 { return s.UTime + s.STime }

// Field numbers of /proc/<pid>/stat (1-based, as proc(5) numbers them),
// counted from the state field that follows the command name.
const (
	fieldState = 3
	fieldUTime = 14
	fieldSTime = 15
)

// ParseStat parses the contents of /proc/<pid>/stat. The command name is
// everything between the first "(" and the last ")", since it may itself
// contain both.
func ParseStat(b []byte) (Stat, error) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 1 || end < open {
		return Stat{}, fmt.Errorf("%w: no (comm) field", ErrFormat)
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return Stat{}, fmt.Errorf("%w: pid %q", ErrFormat, bytes.TrimSpace(b[:open]))
	}
	rest := bytes.Fields(b[end+1:])
	if len(rest) <= fieldSTime-fieldState {
		return Stat{}, fmt.Errorf("%w: %d fields after the command name, want at least %d", ErrFormat, len(rest), fieldSTime-fieldState+1)
	}
	s := Stat{PID: pid, Comm: string(b[open+1 : end])}
	if st := rest[0]; len(st) != 1 {
		return Stat{}, fmt.Errorf("%w: state %q", ErrFormat, st)
	}
	s.State = rest[0][0]
	if s.UTime, err = strconv.ParseUint(string(rest[fieldUTime-fieldState]), 10, 64); err != nil {
		return Stat{}, fmt.Errorf("%w: utime %q", ErrFormat, rest[fieldUTime-fieldState])
	}
	if s.STime, err = strconv.ParseUint(string(rest[fieldSTime-fieldState]), 10, 64); err != nil {
		return Stat{}, fmt.Errorf("%w: stime %q", ErrFormat, rest[fieldSTime-fieldState])
	}
	return s, nil
}

// Read reads and parses /proc/<pid>/stat.
func Read(pid int) (Stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, fmt.Errorf("procstat: %w", err)
	}
	s, err := ParseStat(b)
	if err != nil {
		return Stat{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return s, nil
}

var clockTicks = sync.OnceValue(func() int {
	b, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		return DefaultClockTicks
	}
	if hz, ok := parseAuxv(b, strconv.IntSize/8); ok {
		return hz
	}
	return DefaultClockTicks
})

// ClockTicks returns CLK_TCK, the clock ticks per second of the stat
// fields: AT_CLKTCK from the auxiliary vector, or DefaultClockTicks.
func ClockTicks() int { return clockTicks() }

// atClkTck is the auxiliary vector key of CLK_TCK (see getauxval(3)).
const atClkTck = 17

// parseAuxv finds AT_CLKTCK in an auxiliary vector: pairs of native
// words (key, value), ended by key 0.
func parseAuxv(b []byte, word int) (int, bool) {
	read := func(p []byte) uint64 {
		if word == 4 {
			return uint64(binary.NativeEndian.Uint32(p))
		}
		return binary.NativeEndian.Uint64(p)
	}
	for len(b) >= 2*word {
		key, val := read(b), read(b[word:])
		b = b[2*word:]
		switch {
		case key == 0:
			return 0, false
		case key == atClkTck && val > 0 && val < 1<<20:
			return int(val), true
		}
	}
	return 0, false
}

// Percent returns the CPU used between two samples of one process as a
// percentage of one core over elapsed, at hz ticks a second.
func Percent(before, after Stat, elapsed time.Duration, hz int) float64 {
	if elapsed <= 0 || hz <= 0 || after.Ticks() < before.Ticks() {
		return 0
	}
	cpu := float64(after.Ticks()-before.Ticks()) / float64(hz)
	return cpu / elapsed.Seconds() * 100
}

// System is the machine's CPU time so far, from the "cpu" line of
// /proc/stat, in clock ticks summed over every core.
type System struct {
	// Busy is user, nice, system, irq, softirq and steal time; Idle is
	// idle and iowait time.
	Busy, Idle uint64
}

// ParseSystem parses the contents of /proc/stat.
func ParseSystem(b []byte) (System, error) {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		f := bytes.Fields(line)
		if len(f) < 5 || string(f[0]) != "cpu" {
			continue
		}
		var v [8]uint64
		for i := 1; i < len(f) && i <= len(v); i++ {
			n, err := strconv.ParseUint(string(f[i]), 10, 64)
			if err != nil {
				return System{}, fmt.Errorf("%w: /proc/stat cpu field %d %q", ErrFormat, i, f[i])
			}
			v[i-1] = n
		}
		// user nice system idle iowait irq softirq steal
		return System{Busy: v[0] + v[1] + v[2] + v[5] + v[6] + v[7], Idle: v[3] + v[4]}, nil
	}
	return System{}, fmt.Errorf("%w: no cpu line in /proc/stat", ErrFormat)
}

// ReadSystem reads /proc/stat.
func ReadSystem() (System, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return System{}, fmt.Errorf("procstat: %w", err)
	}
	return ParseSystem(b)
}
