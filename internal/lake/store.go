package lake

import "io"

// Store holds a lake's files: a directory (the default, Config.Dir) or
// an object store (package internal/lake/s3store, for s3:// lakes).
// Names are slash-separated and relative to the lake's root.
type Store interface {
	// Create starts the file rel. Nothing is visible under rel until
	// the File's Commit, which replaces any file there whole.
	Create(rel string) (File, error)
	// ReadFile reads rel whole, refusing one of more than limit bytes;
	// an error that is fs.ErrNotExist when there is no such file.
	ReadFile(rel string, limit int64) ([]byte, error)
	// WriteFile writes rel whole: Create, Write, Commit.
	WriteFile(rel string, b []byte) error
	// List returns the names of every file under dir, recursively,
	// sorted; none when there is none.
	List(dir string) ([]string, error)
	// Remove removes rel; a file already gone is no error.
	Remove(rel string) error
	// String names the lake's location in messages.
	String() string
}

// File is a lake file being written.
type File interface {
	io.Writer
	// Commit makes the file durable (synced to disk, or acknowledged
	// by the object store), then visible under its name.
	Commit() error
	// Abort drops the file: nothing of it becomes visible.
	Abort()
}
