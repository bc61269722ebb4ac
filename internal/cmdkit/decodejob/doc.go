// Package decodejob runs `candec decode`: it loads the DBCs, picks a DBC
// for each interface of a capture, and decodes one capture, many, or
// every capture in directories to value lines (JSON or CSV), a long
// Parquet file, a Parquet data lake (internal/fleet/lake), or with a policy to
// the envelopes the service would publish (RunPolicy). Config says what
// to decode and where; Run does it.
//
// # Outputs are whole or left alone
//
// The output is created only once every input has been checked, and
// written under a temporary name (internal/cmdkit/outfile). What was decoded
// before a malformed line or an interrupt is whole and is kept, while
// the error still fails the decode; a failed write (*WriteError) or a
// decode that gave nothing leaves the file that was there.
//
// # Live input
//
// A capture that is not a regular file (a pipe, a FIFO, a terminal) is
// read in a goroutine of its own, so that the end of the context ends a
// blocked read, and the value lines decoded so far are flushed whenever
// the reader would wait for more.
//
// # Many captures
//
// Into a lake, Config.Jobs captures are decoded at once; each capture's
// files depend on that capture alone, so the lake is the same byte for
// byte whatever the number of jobs. Into one stream, the captures are
// decoded one after the other, and the output is that of their
// concatenation.
//
// # Errors
//
// A *UsageError is a mistake in what was asked for (a command exits 2
// on it); a *WriteError a failure of the output; a *CutError a policy
// run cut short with whole envelopes written. Every other error is one
// of the inputs.
package decodejob
