// Package earlyhup catches SIGHUP from the first instant a Go program
// can, for `candec run`, whose SIGHUP means "read the policy again":
// one that comes while the process starts must not end it, as the
// signal's default would (exit status 129 in a shell).
//
// # When
//
// Importing the package installs the handler in its init, when the
// program's first argument is "run": before the other packages' inits
// (about 8 ms of them in candec) and main. Go initializes, at each
// step, the first package in import-path order whose imports are done;
// this one needs only os/signal, so it runs once the standard library
// it needs has. What is left is the time before the Go runtime and
// those packages are up: about 1 ms (see docs/limits.md), during which
// SIGHUP keeps its default action. No program can close that: the
// kernel delivers a signal by the action in place, and a process has
// none of its own until its code runs.
//
// Any other command keeps SIGHUP's default: a terminal that closes
// still ends a decode.
package earlyhup
