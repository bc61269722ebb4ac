package cli

import (
	"context"
	"fmt"

	"github.com/yukart/candec/internal/base/buildinfo"
)

// runVersion prints what the binary was built from.
func runVersion(_ context.Context, e Env, args []string) error {
	fs := NewFlags(e, "version", "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &ExitError{2, fmt.Errorf("version: unexpected argument %q", fs.Arg(0))}
	}
	_, err := fmt.Fprint(e.Stdout, buildinfo.Read())
	return err
}
