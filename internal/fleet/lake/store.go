package lake

import "io"

// Store holds a lake's files: a directory (the default, Config.Dir) or
// an object store (package internal/fleet/lake/s3store, for s3:// lakes).
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

// TempStore is a Store that can also start a file before its name is
// known. A Writer's tables learn theirs (the input's hash) only at
// Commit; with a Store that is not a TempStore, a Writer writes each
// table to a local temporary file and copies it into the Store (Create,
// Commit) then. The directory store is one: its temporary file is
// renamed in place.
type TempStore interface {
	Store
	// CreateTemp starts a file in dir ("." for the root), a
	// slash-separated directory relative to the lake's root.
	CreateTemp(dir string) (TempFile, error)
}

// TempFile is a lake file being written whose name comes at its Commit.
type TempFile interface {
	io.Writer
	// CommitAs makes the file durable, then visible under rel (a name
	// in the dir it was started in), replacing any file there whole.
	// On an error, nothing of it becomes visible and it is dropped.
	CommitAs(rel string) error
	// Abort drops the file: nothing of it becomes visible.
	Abort()
}
