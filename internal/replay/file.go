package replay

import (
	"os"

	"github.com/yukart/candec/capture"
)

// OpenFile returns an Opener that reads the candump log at path afresh
// for each pass and closes it after the pass.
func OpenFile(path string, opts capture.Options) Opener {
	return func() (Source, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		return &fileSource{Reader: capture.NewReader(f, opts), f: f}, nil
	}
}

// fileSource is a capture file read as a replay source.
type fileSource struct {
	*capture.Reader
	f *os.File
}

// Close closes the file.
func (s *fileSource) Close() error { return s.f.Close() }
