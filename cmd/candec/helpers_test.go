package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yukart/candec/internal/cmdkit/cli"
	"github.com/yukart/candec/internal/testkit"
)

// writeFile and unreachableURL are testkit's, under the names these
// tests call them by.
var (
	writeFile      = testkit.WriteFile
	unreachableURL = testkit.UnreachableURL
)

// run runs the command of args in the developer's table, as candec does.
func run(ctx context.Context, e cli.Env, args []string) error {
	return cli.Execute(ctx, e, commands, args)
}

// yukartDBC is the car's DBC in the repository's testdata.
var yukartDBC = filepath.Join("..", "..", "testdata", "yukart.dbc")

// shortCapture writes the first lines of the car's idle capture.
func shortCapture(t *testing.T) string {
	t.Helper()
	idle, err := os.ReadFile(filepath.Join(filepath.Dir(yukartDBC), "idle.log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfterN(string(idle), "\n", 301)
	return writeFile(t, t.TempDir(), "short.log", strings.Join(lines[:300], ""))
}
