// Package parquetrow is decode's Parquet row of the output formats
// (internal/cmdkit/outformat): a long Parquet file (-o), or a data lake of a
// table per message (--out-dir: a directory, or s3://bucket/prefix in
// object storage, internal/fleet/lake/s3store). Importing it adds the row: the
// developer's binary (cmd/candec) does; the car's (cmd/candec-car) does
// not, since the car does not analyse its own data, so it links no
// parquet-go.
package parquetrow
