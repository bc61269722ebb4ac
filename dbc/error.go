package dbc

import (
	"errors"
	"fmt"
	"strconv"
)

// Sentinel errors. An *Error wraps one of them, so callers can ask what
// kind of problem a DBC file has with errors.Is.
var (
	// ErrSyntax marks text that does not follow the DBC grammar.
	ErrSyntax = errors.New("dbc: syntax error")
	// ErrInvalid marks a definition that parses but cannot be compiled:
	// a signal that does not fit, an unknown multiplexer switch, a
	// float signal of the wrong length, …
	ErrInvalid = errors.New("dbc: invalid definition")
	// ErrConflict marks two files that define the same CAN ID
	// differently.
	ErrConflict = errors.New("dbc: conflicting definitions")
	// ErrNoMessages marks a file given to Load that defines no message
	// (no BO_): most often not a DBC file at all, such as a capture.
	ErrNoMessages = errors.New("dbc: no messages")
)

// Error is a problem in a DBC file, with the place it was found. Its
// Error method reads "file:line:col: what is wrong", the form editors
// and compilers use, so the position can be clicked.
type Error struct {
	File         string
	Line, Column int
	Msg          string
	// Kind is ErrSyntax, ErrInvalid, ErrConflict or ErrNoMessages.
	Kind error
}

// Error returns "file:line:col: what is wrong".
func (e *Error) Error() string {
	return e.File + ":" + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column) + ": " + e.Msg
}

// Unwrap returns the sentinel error that classifies e.
func (e *Error) Unwrap() error { return e.Kind }

// msgf formats the message of an Error or a Warning. Tokens are quoted
// with termtext.Quote; a name (an identifier, which holds nothing a
// terminal acts on) is put in as it is, so a string argument longer than any quote
// gives is a name, and is cut to 80 characters the same way: a 10 MB
// name gives an error line of a few hundred bytes.
func msgf(format string, args ...any) string {
	const longest = 10*80 + 2 // quote's longest: 80 characters of \U0010ffff, in quotes
	for i, a := range args {
		s, ok := a.(string)
		if !ok || len(s) <= longest {
			continue
		}
		n := 0
		for j := range s {
			if n == 80-1 {
				args[i] = s[:j] + "…"
				break
			}
			n++
		}
	}
	return fmt.Sprintf(format, args...)
}
