package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/yukart/candec/internal/base/termtext"
	"github.com/yukart/candec/internal/cmdkit/outfile"
)

// Env carries a command's standard streams, so commands can be run from
// tests.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Command is one subcommand, an entry of the registry: flags and wiring
// only; behaviour lives in the packages.
type Command struct {
	Name    string
	Summary string
	Run     func(ctx context.Context, e Env, args []string) error
}

// lookup finds the command called name in cmds.
func lookup(cmds []Command, name string) (Command, bool) {
	for _, c := range cmds {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

// Main is a binary's main: it runs the command of os.Args among cmds,
// the entries the binary links in the order its usage lists them, and
// exits with the command's status.
func Main(cmds []Command) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := Execute(ctx, Env{os.Stdin, os.Stdout, os.Stderr}, cmds, os.Args[1:])
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			printError(os.Stderr, err)
		}
		os.Exit(ExitCode(err))
	}
}

// printError writes err as candec's last line, made safe for a terminal
// (an error may quote a file's or the network's text).
func printError(w io.Writer, err error) {
	fmt.Fprintln(w, "candec:", termtext.CleanLines(err.Error()))
}

// ExitError carries a specific exit status.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Exit returns err with the exit status code.
func Exit(code int, err error) error { return &ExitError{code, err} }

// Exit statuses: the table is shown by 'candec -h' and in the README, and
// TestExitStatusEveryCommand checks it for every command.
const (
	exitOK      = 0 // the command did what was asked
	exitFailure = 1 // it could not: a missing or bad input, a failed write, a signal
	exitUsage   = 2 // the command line is wrong: an unknown flag, a missing argument, an output that is an input
)

// exitStatusTable is the table of exit statuses, as 'candec -h' and the
// README show it.
const exitStatusTable = `Exit status:
  0  success
  1  failure: a missing or bad input, a failed write (also to standard output), an interrupt
  2  usage: an unknown command or flag, a missing or extra argument, an output that is also an input
  3  bench --fail-on-warning only: a run had a warning`

// ExitCode is the exit status of a command that returned err.
func ExitCode(err error) int {
	var ee *ExitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.Code
	case errors.Is(err, outfile.ErrSameFile):
		// The user named one file twice: a usage error in every
		// command, whichever step found it.
		return exitUsage
	}
	return exitFailure
}

// Execute runs the command of args among cmds. Whatever it writes to
// standard output is checked: a command (or its help) that could not
// write all of it fails, with exit status 1, even if it saw no error
// itself.
func Execute(ctx context.Context, e Env, cmds []Command, args []string) error {
	out := &stdoutWriter{w: e.Stdout}
	e.Stdout = out
	err := dispatch(ctx, e, cmds, args)
	if out.err != nil && (err == nil || ExitCode(err) == exitOK) {
		return fmt.Errorf("write standard output: %w", out.err)
	}
	return err
}

// stdoutWriter remembers the first failed write to standard output and
// fails every later one, so a command stops writing to a full disk or a
// closed pipe.
type stdoutWriter struct {
	w   io.Writer
	err error
}

func (s *stdoutWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	s.err = err
	return n, err
}

// dispatch runs the command of args.
func dispatch(ctx context.Context, e Env, cmds []Command, args []string) error {
	if len(args) == 0 {
		usage(e.Stderr, cmds)
		return &ExitError{2, errors.New("no command given")}
	}
	if args[0] == "--version" || args[0] == "-version" {
		return dispatch(ctx, e, cmds, append([]string{"version"}, args[1:]...))
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		if len(args) > 1 && args[0] == "help" {
			if _, ok := lookup(cmds, args[1]); ok {
				return dispatch(ctx, e, cmds, []string{args[1], "-h"})
			}
			usage(e.Stderr, cmds)
			return &ExitError{2, fmt.Errorf("help: unknown command %q", args[1])}
		}
		usage(e.Stdout, cmds)
		return nil
	}
	c, ok := lookup(cmds, args[0])
	if !ok {
		return &ExitError{2, fmt.Errorf("unknown command %q; see 'candec help'", args[0])}
	}
	err := c.Run(ctx, e, args[1:])
	switch {
	case err == nil:
		return nil
	case isHelp(err):
		return nil
	case isFlagError(err):
		return &ExitError{2, fmt.Errorf("%s: %v; see 'candec %s -h'", args[0], err, args[0])}
	}
	return err
}

func usage(w io.Writer, cmds []Command) {
	fmt.Fprintln(w, "candec: CAN frames in, per-signal MQTT envelopes out.\n\nUsage: candec <command> [flags]\n\nCommands:")
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-8s %s\n", c.Name, c.Summary)
	}
	fmt.Fprintln(w, "\nRun 'candec <command> -h' (or 'candec help <command>') for a command's flags.")
	fmt.Fprintln(w, "\n"+exitStatusTable)
}

// helpFlag is -h and -help. Defining them (rather than leaving them to the
// flag package) lets the help go to stdout, where a user can page it,
// while flag errors go to stderr as one line: its Set prints the help and
// stops the parse with flag.ErrHelp, which run turns into exit status 0.
type helpFlag struct{ show func() }

func (h helpFlag) String() string   { return "" }
func (h helpFlag) IsBoolFlag() bool { return true }
func (h helpFlag) Set(string) error { h.show(); return flag.ErrHelp }

// isHelp reports whether err is the parse error of -h: the flag package
// reports a failed Set as text ("invalid boolean flag h: flag: help
// requested"), so the sentinel is found by its message.
func isHelp(err error) bool {
	return errors.Is(err, flag.ErrHelp) || strings.HasSuffix(err.Error(), ": "+flag.ErrHelp.Error())
}

// flagErrorPrefixes are the beginnings of the flag package's parse
// errors, which it returns as plain text.
var flagErrorPrefixes = []string{
	"flag provided but not defined: ",
	"bad flag syntax: ",
	"invalid value ",
	"invalid boolean value ",
	"invalid boolean flag ",
	"flag needs an argument: ",
}

// isFlagError reports whether err is a parse error of the flag package,
// returned unwrapped by a command.
func isFlagError(err error) bool {
	if errors.Unwrap(err) != nil {
		return false
	}
	for _, p := range flagErrorPrefixes {
		if strings.HasPrefix(err.Error(), p) {
			return true
		}
	}
	return false
}

// FlagSetCreated, set by tests only, sees each flag set a command makes,
// so a test can reach every flag of every command without a list of its
// own that would miss a new one.
var FlagSetCreated func(*flag.FlagSet)

// NewFlags returns a flag set that reports errors instead of exiting. A
// parse error is returned, not printed: run prints it once, with the
// command's name and a pointer to its -h, instead of the whole usage. -h
// prints the help (synopsis, flags with their defaults) to stdout. A
// command that calls Usage itself (a missing argument) gets the synopsis
// on stderr, one line.
func NewFlags(e Env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	if FlagSetCreated != nil {
		FlagSetCreated(fs)
	}
	var parseErr bytes.Buffer
	fs.SetOutput(&parseErr)
	fs.Usage = func() {
		if parseErr.Len() > 0 {
			parseErr.Reset() // a parse error: run reports it
			return
		}
		fmt.Fprintf(e.Stderr, "usage: candec %s %s (see 'candec %s -h')\n", name, synopsis, name)
	}
	show := func() {
		fmt.Fprintf(e.Stdout, "Usage: candec %s %s\n", name, synopsis)
		n := 0
		fs.VisitAll(func(f *flag.Flag) {
			if f.Name != "h" && f.Name != "help" {
				n++
			}
		})
		if n > 0 {
			fmt.Fprintln(e.Stdout, "\nFlags:")
			fs.SetOutput(e.Stdout)
			printDefaults(fs)
			fs.SetOutput(&parseErr)
		}
	}
	fs.Var(helpFlag{show}, "h", "show this help")
	fs.Var(helpFlag{show}, "help", "show this help")
	return fs
}

// printDefaults is fs.PrintDefaults without -h and -help.
func printDefaults(fs *flag.FlagSet) {
	tmp := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	tmp.SetOutput(fs.Output())
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name != "h" && f.Name != "help" {
			tmp.Var(f.Value, f.Name, f.Usage)
			tmp.Lookup(f.Name).DefValue = f.DefValue // not the value parsed so far
		}
	})
	tmp.PrintDefaults()
}

// ParseArgs parses args into fs, then checks the positional arguments
// as CheckArgs does.
func ParseArgs(fs *flag.FlagSet, args []string, want int, what string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	return CheckArgs(fs, want, what)
}

// CheckArgs checks a command's positional arguments after parsing: want
// of them (-1: any number, at least one). An argument that looks like a
// flag after the first positional one is the common slip of writing
// flags after the file, which the flag package leaves as arguments.
func CheckArgs(fs *flag.FlagSet, want int, what string) error {
	args := fs.Args()
	for i, a := range args {
		if i > 0 && len(a) > 1 && a[0] == '-' {
			return &ExitError{2, fmt.Errorf("%s: %s after %s: flags go before %s; see 'candec %s -h'", fs.Name(), a, args[0], what, fs.Name())}
		}
	}
	switch {
	case want < 0 && len(args) == 0:
		return &ExitError{2, fmt.Errorf("%s: no %s given; see 'candec %s -h'", fs.Name(), what, fs.Name())}
	case want >= 0 && len(args) != want:
		if want == 0 {
			return &ExitError{2, fmt.Errorf("%s: unexpected argument %q; see 'candec %s -h'", fs.Name(), args[0], fs.Name())}
		}
		return &ExitError{2, fmt.Errorf("%s: want exactly one %s, got %d arguments; see 'candec %s -h'", fs.Name(), what, len(args), fs.Name())}
	}
	return nil
}
