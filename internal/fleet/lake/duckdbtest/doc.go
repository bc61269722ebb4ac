// Package duckdbtest checks a lake that candec writes with DuckDB, a real
// query engine. It is a module of its own so that DuckDB's large cgo
// library stays out of candec's go.mod.
package duckdbtest
