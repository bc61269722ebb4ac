package cli

import (
	"context"
	"fmt"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/internal/cmdkit/outfile"
)

// runConvert writes a capture of any format the frame source reads as a
// candump -l log.
func runConvert(ctx context.Context, e Env, args []string) error {
	fs := NewFlags(e, "convert", "[flags] IN|- OUT|-")
	skip := fs.Bool("skip-invalid", false, "skip malformed records of IN (and count them) instead of stopping")
	errFrames := fs.Bool("error-frames", false, "write error frames too (by default they are left out and counted: ASC, BLF, TRC and MF4 say too little about an error for candump's error classes)")
	if err := ParseArgs(fs, args, -1, "IN"); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return &ExitError{2, fmt.Errorf("convert: want IN and OUT, got %d arguments; see 'candec convert -h'", fs.NArg())}
	}
	in, out := fs.Arg(0), fs.Arg(1)
	// The input is checked (and its format found) before the output is
	// created; an output that is the input is refused.
	src, err := capture.OpenContext(ctx, in, capture.Options{SkipInvalid: *skip, Stdin: e.Stdin})
	if err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	defer src.Close()
	of, err := outfile.Create(out, e.Stdout, in)
	if err != nil {
		return fmt.Errorf("convert: OUT: %w", err)
	}
	defer of.Abort()
	st, cerr := capture.Copy(ctx, capture.NewWriter(of), src, capture.CopyOptions{ErrorFrames: *errFrames})
	if werr := of.Err(); werr != nil {
		// The output failed (a full disk): nothing is committed, a file
		// that was there stays whole, and no count of frames is claimed.
		return fmt.Errorf("convert: %w", werr)
	}
	if cerr != nil && st.Frames == 0 {
		return fmt.Errorf("convert: %s: %w", in, cerr) // nothing to keep: a file that was there stays
	}
	// The frames before a malformed record are whole lines and are kept;
	// the error still ends the command with a non-zero status.
	if err := of.Commit(); err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	fmt.Fprintf(e.Stderr, "convert: %d frames from %s (%s)", st.Frames, in, src.Format())
	if st.ErrorFrames > 0 {
		fmt.Fprintf(e.Stderr, ", %d error frames left out", st.ErrorFrames)
	}
	if st.Skipped > 0 {
		fmt.Fprintf(e.Stderr, ", %d malformed records skipped", st.Skipped)
	}
	fmt.Fprintln(e.Stderr)
	switch {
	case cerr != nil && ctx.Err() != nil:
		return fmt.Errorf("convert: %s: interrupted after %d frames, written as whole lines", in, st.Frames)
	case cerr != nil:
		return fmt.Errorf("convert: %s: stopped after %d frames: %w", in, st.Frames, cerr)
	}
	return nil
}
