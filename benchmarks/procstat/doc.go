// Package procstat measures how much CPU a process uses, from the
// utime and stime fields of Linux's /proc/<pid>/stat.
//
// Those fields count clock ticks spent in user and kernel mode by every
// thread of the process. A Meter reads them for a set of named processes
// at the start and at the end of a measured window and reports each as a
// percentage of one core: 100 % is one core busy for the whole window, and
// a multi-threaded process can exceed it.
//
// # Clock ticks
//
// A tick is 1/CLK_TCK seconds. CLK_TCK is 100 on every common Linux
// build, but it is a kernel parameter: ClockTicks reads it from the
// AT_CLKTCK entry of the process's auxiliary vector (/proc/self/auxv), as
// the C library's sysconf(_SC_CLK_TCK) does, and falls back to 100. At
// 100 ticks a second the resolution is 10 ms of CPU, so a 20 s window
// measures to 0.05 % of a core.
package procstat
