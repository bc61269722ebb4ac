package replay

import (
	"context"
	"fmt"
	"io"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/frame"
)

// OpenFile returns an Opener that opens the capture at path
// (capture.OpenContext: "-" is opts.Stdin, the format is read from the
// content) afresh for each pass. The source is a *capture.File, which
// Run closes after the pass, whose read errors start with path. A read
// of a pipe that waits ends when ctx ends.
func OpenFile(ctx context.Context, path string, opts capture.Options) Opener {
	return func() (capture.Source, error) {
		f, err := capture.OpenContext(ctx, path, opts)
		if err != nil {
			return nil, err
		}
		name := path
		if name == "-" {
			name = "standard input"
		}
		return namedSource{f, name}, nil
	}
}

// namedSource is a capture file whose read errors name it: the replay's
// error then says which capture broke, and where.
type namedSource struct {
	*capture.File
	name string
}

func (s namedSource) Next(f *frame.Frame) error {
	err := s.File.Next(f)
	if err != nil && err != io.EOF {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	return err
}
