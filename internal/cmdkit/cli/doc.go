// Package cli is candec's command registry and the commands the car
// runs. A command is a Command entry: its name, one line of help and
// the function that parses its flags and wires the packages that do
// the work. Each binary's main lists the entries it links, in the
// order its usage shows them, and calls Main: cmd/candec, the
// developer's and the cloud's, with every command (its own entries for
// demo, plot, tune, ingest and bench beside these), and cmd/candec-car,
// the car's, with Car. What a binary links is what its main imports:
// this package imports nothing of the lab or the cloud (internal/testkit/layout's
// TestCarBinary).
//
// The framework (Execute) gives every command the same help (-h, help
// <command>), flag errors (one line, exit status 2), checked standard
// output and exit statuses (ExitCode); NewFlags, CheckArgs and Exit are
// for the commands that live in a main's own package.
package cli
