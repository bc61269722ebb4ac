// Package capture reads CAN captures of every common format through one
// frame source, and writes the log format of candump -l (Linux
// can-utils), one frame a line:
//
//	(1696868256.123456) can0 123#DEADBEEF
//	(1696868256.123789) can1 1A2B3C4D#0102030405060708
//	(1696868256.124000) can0 123#R
//	(1696868256.124100) can0 123##1112233445566778899AABB
//
// # Formats
//
// A Source is a stream of frames whatever the format it is read from;
// every consumer of frames reads through it. NewSource (and Open, for a
// file or standard input) chooses the format by content, never by the
// file's name: it peeks at the head of the input and gives it to each
// registered format's detector in turn: the candump log (a *Reader),
// Vector ASC (*ASCReader), PEAK TRC (*TRCReader), Vector BLF
// (*BLFReader) and ASAM MDF4 bus logging (*MF4Reader), and gzip of any
// of them. A format is added with its reader's file and one line in the
// registry (source.go). docs/capture-format.md and the docs/capture-*.md
// pages say what each reader takes.
//
// Channels follow one rule: the 1-based channels of ASC, BLF, TRC and
// MDF4 become the interfaces can0, can1, … (channel c is bus c-1), so
// that can1 is the same bus whatever the file.
//
// The head is only what the input has given: NewSource reads no more
// than the next byte beyond what is buffered, until a format recognises
// the head, the head holds a whole line that is not blank, it is 4 KiB
// long or the input ends. So a live pipe that has written one line is
// enough, and its first frame is not held back waiting for the next.
// An empty capture (or one of blank lines only) holds no frames: its
// Source returns io.EOF at once. Anything else that no format
// recognises is ErrFormat, whose message shows what the head looked
// like: its first line, or its first bytes in hex.
//
// A candump log is recognised by its first line that is not blank
// starting with "(" and a digit. A line that starts so but is malformed
// further on is left to the Reader, which reports it as a *LineError
// with its line and column.
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
// # Live input
//
// A pipe, a FIFO or a terminal may keep a reader waiting for as long as
// its writer likes. OpenContext reads such a source through a
// LiveReader, so that the end of its context (a signal, in candec) ends
// a wait at once, from the open of a FIFO that no writer has opened yet
// to the last read; a regular file is read as it is. A program that
// reads its input itself wraps it in NewLiveReader, whose idle hook says
// when a read is about to wait.
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
