// Package outformat is the table of `candec decode`'s output formats. A
// format is one row of the table (formats.go): its name, its file
// extension, whether it is binary, the constructor of its writer, and,
// for a format that can write a data lake (--out-dir), the lake's.
//
// # Adding a format
//
// Write a writer of values (Sink) in a package of its own and add its
// row. decode's flags, its errors and decodejob take every format from
// the table, and nothing else names one.
//
// # Binaries
//
// The Parquet row is a package of its own (internal/cmdkit/outformat/parquetrow)
// that registers itself when imported: the developer's binary imports
// it, the car's (cmd/candec-car) does not and links no parquet-go, and a
// name it leaves out (Lookup) gets an error saying which binary has it.
package outformat
