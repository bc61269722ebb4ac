// Package s3test checks candec's lakes in object storage
// (internal/fleet/lake/s3store) against a real S3 server: SeaweedFS, built
// from its Go module (the seaweedfs directory, a module of its own)
// and started on free ports by each test that needs one, stopped by
// PID. The lake written there is read back with DuckDB, as the
// duckdbtest module does for a directory lake. It is a module of its
// own so that DuckDB's cgo library and the server stay out of candec's
// go.mod.
package s3test
