package main

import (
	"context"
	"fmt"

	"github.com/yukart/candec/internal/buildinfo"
)

// runVersion prints what the binary was built from.
func runVersion(_ context.Context, e env, args []string) error {
	fs := newFlags(e, "version", "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &exitError{2, fmt.Errorf("version: unexpected argument %q", fs.Arg(0))}
	}
	_, err := fmt.Fprint(e.stdout, buildinfo.Read())
	return err
}
