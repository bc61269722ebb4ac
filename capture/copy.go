package capture

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/yukart/candec/frame"
)

// CopyStats counts what Copy did.
type CopyStats struct {
	// Frames counts the frames written.
	Frames int64
	// ErrorFrames counts the error frames left out (CopyOptions.ErrorFrames
	// off): the other formats say too little about an error for candump's
	// error classes.
	ErrorFrames int64
	// Skipped counts malformed records skipped (Options.SkipInvalid).
	Skipped int
}

// CopyOptions tune Copy.
type CopyOptions struct {
	// ErrorFrames writes error frames too; by default they are left out
	// and counted.
	ErrorFrames bool
}

// Copy writes every frame of src to w as candump -l lines, until the end
// of src, a malformed record, a write error or the end of ctx, and
// flushes w. What was written before an error is whole lines.
func Copy(ctx context.Context, w *Writer, src Source, opts CopyOptions) (CopyStats, error) {
	var (
		st  CopyStats
		f   frame.Frame
		err error
	)
	for n := 1; ; n++ {
		if err = src.Next(&f); err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			break
		}
		if f.Flags&frame.Error != 0 && !opts.ErrorFrames {
			st.ErrorFrames++
			continue
		}
		if err = w.Write(&f, src.Interface(f.Bus)); err != nil {
			err = fmt.Errorf("frame %d: %w", st.Frames+1, err)
			break
		}
		st.Frames++
		if n&0xFFF == 0 {
			if err = ctx.Err(); err != nil {
				break
			}
		}
	}
	st.Skipped = src.Skipped()
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return st, err
}
