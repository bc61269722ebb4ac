package replay

import (
	"context"

	"github.com/yukart/candec/capture"
)

// OpenFile returns an Opener that opens the capture at path
// (capture.OpenContext: "-" is opts.Stdin, the format is read from the
// content) afresh for each pass. The source is a *capture.File, which
// Run closes after the pass. A read of a pipe that waits ends when ctx
// ends.
func OpenFile(ctx context.Context, path string, opts capture.Options) Opener {
	return func() (capture.Source, error) {
		f, err := capture.OpenContext(ctx, path, opts)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
}
