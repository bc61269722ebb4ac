package cardata

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"os"
	"sync"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/lab/simulate"
)

// The default files, relative to the repository root, and the names
// their built-in copies go by in messages.
const (
	DBCFile     = "testdata/yukart.dbc"
	CaptureFile = "testdata/idle.log"
	DBCName     = "yukart.dbc (built into candec)"
	CaptureName = "idle.log (built into candec)"
)

//go:embed yukart.dbc
var dbcText string

// DBC returns the text of the built-in yukart.dbc.
func DBC() []byte { return []byte(dbcText) }

// LoadDBC parses and compiles the built-in yukart.dbc.
func LoadDBC() (*dbc.Database, error) {
	f, err := dbc.Parse(DBCName, DBC())
	if err != nil {
		return nil, fmt.Errorf("cardata: %w", err)
	}
	db, err := dbc.Compile(f)
	if err != nil {
		return nil, fmt.Errorf("cardata: %w", err)
	}
	return db, nil
}

// capture is the generated idle capture, made once.
var capture = sync.OnceValues(func() ([]byte, error) {
	db, err := LoadDBC()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := simulate.WriteLog(context.Background(), &b, db, simulate.DefaultOptions()); err != nil {
		return nil, fmt.Errorf("cardata: generate %s: %w", CaptureName, err)
	}
	return b.Bytes(), nil
})

// Capture returns the built-in idle capture, a candump -l log: the
// generator's default output for the built-in DBC, the same bytes as
// testdata/idle.log. The caller must not change them.
func Capture() ([]byte, error) { return capture() }

// Missing reports whether a default file is absent, so that its
// built-in copy stands in for it; any other error (a file that cannot
// be read) is left to the reader to report.
func Missing(path string) bool {
	_, err := os.Stat(path)
	return os.IsNotExist(err)
}
