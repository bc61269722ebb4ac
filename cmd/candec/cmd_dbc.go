package main

import (
	"context"

	"github.com/yukart/candec/dbc"
)

// runDBC loads the DBC files given as arguments together, as the
// decoder would, and describes the result; an invalid file ends it with
// the error's position.
func runDBC(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "dbc", "FILE…")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkArgs(fs, -1, "FILE"); err != nil {
		return err
	}
	db, err := dbc.LoadContext(ctx, fs.Args()...)
	if err != nil {
		return err
	}
	return db.Describe(e.stdout)
}
