package procstat

import (
	"fmt"
	"time"
)

// Usage is one process's CPU over a measured window.
type Usage struct {
	// Name is the name the process was added under.
	Name string
	// PID is its process ID.
	PID int
	// CPU is the CPU time it used in the window.
	CPU time.Duration
	// Percent is CPU as a percentage of one core over the window.
	Percent float64
}

// Meter measures the CPU of a set of named processes over one window.
// Add the processes, call Start when the window opens and Stop when it
// closes; the processes must still be running at Stop (a process that
// exited cannot be read). The zero value is ready to use.
type Meter struct {
	procs []meterProc
	start time.Time
	hz    int

	sysBefore   System
	sysOK       bool
	busy, other float64
}

type meterProc struct {
	name   string
	pid    int
	before Stat
}

// Add adds a process to measure. Call it before Start.
func (m *Meter) Add(name string, pid int) {
	m.procs = append(m.procs, meterProc{name: name, pid: pid})
}

// Start opens the window at now, reading every process's counters.
func (m *Meter) Start(now time.Time) error {
	m.start = now
	m.hz = ClockTicks()
	m.sysBefore, m.sysOK = System{}, false
	if s, err := ReadSystem(); err == nil {
		m.sysBefore, m.sysOK = s, true
	}
	for i := range m.procs {
		s, err := Read(m.procs[i].pid)
		if err != nil {
			return fmt.Errorf("procstat: start %s: %w", m.procs[i].name, err)
		}
		m.procs[i].before = s
	}
	return nil
}

// Stop closes the window at now and returns each process's usage, in
// the order they were added.
func (m *Meter) Stop(now time.Time) ([]Usage, error) {
	elapsed := now.Sub(m.start)
	out := make([]Usage, 0, len(m.procs))
	var ours uint64
	for _, p := range m.procs {
		s, err := Read(p.pid)
		if err != nil {
			return out, fmt.Errorf("procstat: stop %s: %w", p.name, err)
		}
		ticks := s.Ticks() - min(p.before.Ticks(), s.Ticks())
		ours += ticks
		out = append(out, Usage{
			Name:    p.name,
			PID:     p.pid,
			CPU:     time.Duration(ticks) * time.Second / time.Duration(m.hz),
			Percent: Percent(p.before, s, elapsed, m.hz),
		})
	}
	m.busy, m.other = 0, 0
	if sys, err := ReadSystem(); err == nil && m.sysOK && elapsed > 0 {
		busy := sys.Busy - min(m.sysBefore.Busy, sys.Busy)
		pct := func(ticks uint64) float64 { return float64(ticks) / float64(m.hz) / elapsed.Seconds() * 100 }
		m.busy = pct(busy)
		m.other = pct(busy - min(ours, busy))
	}
	return out, nil
}

// Machine returns, for the last window, the whole machine's busy CPU and
// the part of it used by processes the Meter did not measure, both in %
// of one core (a machine with n cores goes up to n × 100 %).
func (m *Meter) Machine() (busy, other float64) { return m.busy, m.other }
