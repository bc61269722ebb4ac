// Package lake writes decoded CAN signals as Parquet for query engines
// (DuckDB, pandas, Polars, Spark, Trino): one file in long form (Long),
// or a data lake of one table per message with a typed column per
// signal, partitioned Hive-style by message and date (Lake).
// docs/lake.md is the reference for the layout, the column types and
// the nulls.
//
// # Writing
//
// A writer keeps the rows of a row group in plain typed slices, a slice
// per column, and hands them to parquet-go only when the group is full
// (DefaultRowGroupRows, DefaultTableRowGroupRows) or the input ends:
// adding a decoded value is a store into a slice, with no allocation
// once the slices have grown.
//
// # Where the files live
//
// A lake's files are in a Store: a directory (Config.Dir, the default)
// or an object store (Config.Store, package internal/fleet/lake/s3store).
// Every name is slash-separated and relative to the lake's root. A
// Writer's tables go under message=<m>/date=<d>/, or under a prefix of
// the caller's (NewWriterIn, e.g. vehicle=<id>/, escaped with Escape).
//
// # Whole files only
//
// Every lake file becomes visible whole or not at all: File.Commit
// makes it durable, then gives it its name. In a directory it is
// written under a temporary name, .candec-*.tmp, in its partition
// directory, synced, and renamed to its final name only when its input
// has been decoded to the end (Writer.Commit). A query
// engine globbing "*.parquet" never sees a file being written, and a
// killed run leaves only such temporary files, which the next Open
// removes. The long file is written through the caller's output, which
// does the same (internal/cmdkit/outfile).
//
// # Nothing outside the lake
//
// Every path below Config.Dir is opened within it (an os.Root, and
// openat with O_NOFOLLOW for the lock file), so a symbolic link planted
// in a shared lake, even while a run writes it, cannot make the run
// write, truncate or create a file outside. A symbolic link in the
// lake's root, a message or a partition directory is refused (ErrLink),
// as is a named pipe or a device (ErrNotRegular) and a lock file with
// another name (a hard link); a named pipe is never opened in a way
// that waits.
// Files are made with mode Perm and directories DirPerm, less the umask.
//
// # One run at a time
//
// Open takes an exclusive lock (flock) on the lake's LockName file and
// holds it until Close; the system drops it when a process dies. A
// second Open of a lake held, by another process or in this one, fails
// at once with ErrBusy, naming the lake and the holder's process ID,
// rather than wait: a decode can take long, and one waiting unseen would
// only decode the same captures again after it. Holding the lock, Open
// knows that no temporary file in the lake is being written, so removing
// them is safe; it removes candec's own (.candec-*.tmp) and nothing else.
//
// Writers that share a lake (the instances of an ingest) each name
// themselves with Config.Owner: they take the lock shared, so they run
// together while a decode's Open fails as busy (and theirs while a
// decode runs), and each removes only its own temporary files,
// .candec-<owner>-*.tmp. One owner is one writer at a time: on Linux
// an Open of an owner already open is busy (an open file description
// lock on a byte of the lock file that the owner's name chooses). An
// object store has no lock: there, one decode writes one prefix at a
// time, and one ingest instance runs per id.
//
// # Out of range
//
// A table's oor column lists, per row, the columns of the signals whose
// value lay outside the DBC's minimum..maximum (decoder.OutOfRange), in
// column order; it is null in a row with none, as most rows are.
//
// # Re-runs
//
// A file's name is its interface and a hash of its input's content, so
// decoding a capture again replaces its files rather than adding rows
// twice. The lake's root holds a marker, _candec_lake.json, with a hash
// of the DBC files and the signal globs that made it; Open refuses a
// lake made with others (ErrMixed), so one lake never mixes two DBC
// versions.
package lake
