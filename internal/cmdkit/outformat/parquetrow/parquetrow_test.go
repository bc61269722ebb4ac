package parquetrow

import (
	"testing"

	"github.com/yukart/candec/internal/cmdkit/outformat"
)

// TestRegistered: importing the package adds the Parquet row, last in
// the table, as the lake's format.
func TestRegistered(t *testing.T) {
	f, err := outformat.Lookup("parquet")
	if err != nil || f.Name != "parquet" || !f.Binary || f.New == nil || f.OpenLake == nil {
		t.Fatalf("Lookup(parquet): got %+v, %v; want the Parquet row", f, err)
	}
	if got, want := outformat.Names(), "json, csv or parquet"; got != want {
		t.Errorf("Names: got %q, want %q", got, want)
	}
	if lf, ok := outformat.LakeFormat(); !ok || lf.Name != "parquet" {
		t.Errorf("LakeFormat: got %q, %v; want parquet", lf.Name, ok)
	}
}
