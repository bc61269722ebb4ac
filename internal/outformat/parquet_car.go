//go:build car

package outformat

// The car's build leaves out the Parquet row (parquet.go).
func init() { absent = append(absent, "parquet") }
