package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/yukart/candec/internal/cmdkit/cli"
	"github.com/yukart/candec/internal/lab/mosquitto"
)

// writeFile writes text to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// unreachableURL is a broker URL where nothing listens.
func unreachableURL(t *testing.T) string {
	t.Helper()
	port, err := mosquitto.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return "mqtt://127.0.0.1:" + strconv.Itoa(port)
}

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
