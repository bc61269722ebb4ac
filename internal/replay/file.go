package replay

import (
	"github.com/yukart/candec/capture"
)

// OpenFile returns an Opener that opens the capture at path (capture.Open:
// "-" is opts.Stdin, the format is read from the content) afresh for
// each pass. The source is a *capture.File, which Run closes after the
// pass.
func OpenFile(path string, opts capture.Options) Opener {
	return func() (capture.Source, error) {
		f, err := capture.Open(path, opts)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
}
