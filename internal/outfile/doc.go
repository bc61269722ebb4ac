// Package outfile writes a command's output file so that a user's file is
// never lost: a regular file is written under a temporary name beside it and
// renamed over it only once the whole output is written, an output that is
// one of the command's inputs is refused before anything is opened, and a
// failed or interrupted run removes only its own temporary file.
//
// A path that exists and is not a regular file (a terminal, a pipe, a device
// such as /dev/null or /dev/full) is written in place and never removed or
// replaced. "-" is standard output.
package outfile
