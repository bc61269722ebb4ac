// Package readfile reads a file named by a user whole, with a limit.
//
// Every file candec reads whole (a DBC file, the service's config, a
// policy, the bench's scenarios, the PEM files of TLS) goes through Read,
// so that none of them can make candec wait or grow without bound:
//
//   - only a regular file is read: a FIFO, a device such as /dev/zero, a
//     socket or a directory is refused at once, without a read, and
//     opening a FIFO does not wait for a writer;
//   - a file over the caller's limit is refused before it is read (and
//     one that grows past the limit while it is read), with an error that
//     names the file, its size and the limit;
//   - the read goes in chunks and stops when the context ends, so a
//     signal ends it.
//
// The limits belong to the callers (dbc.MaxFileSize,
// pipeline.MaxPolicySize, service.MaxConfigSize, …); docs/limits.md lists
// them. This package imports only the standard library, which lets the
// libraries and the service use it (see internal/testkit/layout).
package readfile
