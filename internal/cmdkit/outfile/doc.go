// Package outfile writes a command's output file so that a user's file is
// never lost: a regular file is written under a temporary name beside it and
// renamed over it only once the whole output is written, an output that is
// one of the command's inputs is refused before anything is opened, and a
// failed or interrupted run removes only its own temporary file. A failed
// write (a full disk, a file size limit) is kept by the File: Commit then
// commits nothing, so a file cut short never replaces a whole one.
//
// A new file gets the mode os.Create gives (Perm, 0666 less the umask); a
// file replaced keeps its mode.
//
// A path that exists and is not a regular file (a terminal, a pipe, a device
// such as /dev/null or /dev/full) is written in place and never removed or
// replaced. A named pipe that no process reads is refused at once rather
// than waited for: start its reader first. "-" is standard output.
package outfile
