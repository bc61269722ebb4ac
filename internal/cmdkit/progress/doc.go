// Package progress draws a one-line progress bar on a terminal, for
// commands that run for a while (a bench run, a long decode):
//
//	car-8-50hz 4/14  window  [############............]  12s/20s  env 4,300/s
//
// On a terminal the line is redrawn in place at most ten times a second;
// elsewhere (a log, a CI job) only a change of phase prints a line, so
// logs stay short.
package progress
