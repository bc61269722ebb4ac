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
// # Whole files only
//
// Every lake file is written under a temporary name beginning with "."
// in its partition directory, synced, and renamed to its final name
// only when its input has been decoded to the end (Writer.Commit). A
// query engine globbing "*.parquet" never sees a file being written,
// and a killed run leaves only dot files, which Open removes on the next
// run. The long file is written through the caller's output, which does
// the same (internal/outfile).
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
