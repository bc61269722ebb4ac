package cli

import (
	"context"
	"io"
	"strings"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/base/termtext"
)

// runDBC loads the DBC files given as arguments together, as the
// decoder would, and describes the result; an invalid file ends it with
// the error's position.
func runDBC(ctx context.Context, e Env, args []string) error {
	fs := NewFlags(e, "dbc", "FILE…")
	if err := ParseArgs(fs, args, -1, "FILE"); err != nil {
		return err
	}
	db, err := dbc.LoadContext(ctx, fs.Args()...)
	if err != nil {
		return err
	}
	// A DBC's names, units and warnings are outside text: made safe
	// for a terminal, as everything candec prints of a file.
	var b strings.Builder
	if err := db.Describe(&b); err != nil {
		return err
	}
	_, err = io.WriteString(e.Stdout, termtext.CleanLines(b.String()))
	return err
}
