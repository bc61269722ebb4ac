// Package capture reads and writes CAN captures in the log format of
// candump -l (Linux can-utils), one frame a line:
//
//	(1696868256.123456) can0 123#DEADBEEF
//	(1696868256.123789) can1 1A2B3C4D#0102030405060708
//	(1696868256.124000) can0 123#R
//	(1696868256.124100) can0 123##1112233445566778899AABB
//
// # Reading
//
// A Reader streams frames from any io.Reader with constant memory and no
// allocation per line, so it reads a capture of gigabytes from a file or
// from standard input. Timestamps become nanoseconds exactly: the seconds
// and the fraction are parsed as integers, never through a float.
//
// Interface names become bus indexes: can<N> and vcan<N> get Bus = N
// (N < 256); any other name gets the highest index still free (255, 254,
// …), so it cannot take the index a can<N> seen later wants. Interface
// turns an index back into its name.
//
// A malformed line is a *LineError naming the line number, the column and
// what is wrong; with Options.SkipInvalid the Reader skips such lines and
// counts them instead.
//
// # Writing
//
// A Writer writes frames in the form candump writes them: 3 upper-case
// hex digits for an 11-bit ID, 8 for a 29-bit ID or an error frame, 6
// decimals of seconds. Reading a candump log and writing its frames back
// reproduces it byte for byte, except for what a frame does not keep:
// zero-padded seconds, other numbers of decimals, lower-case hex, padded
// interface names, direction markers, dots between data bytes, a raw DLC
// after "_" and the CAN FD flags digit's bits other than BRS (1) and ESI (2).
package capture
