package lake

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// spoolFile is a TempFile of a Store without CreateTemp: written to a
// local temporary file (in os.TempDir), copied into the Store (Create,
// Write, Commit) at CommitAs, and removed.
type spoolFile struct {
	st Store
	f  *os.File // nil once committed or aborted
}

func newSpool(st Store) (TempFile, error) {
	f, err := os.CreateTemp("", "candec-lake-*.parquet")
	if err != nil {
		return nil, fmt.Errorf("lake: %w", err)
	}
	return &spoolFile{st: st, f: f}, nil
}

func (s *spoolFile) Write(b []byte) (int, error) {
	if s.f == nil {
		return 0, errDone
	}
	return s.f.Write(b)
}

// CommitAs copies the file into the store as rel and commits it there.
func (s *spoolFile) CommitAs(rel string) error {
	if s.f == nil {
		return errDone
	}
	defer s.Abort()
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("lake: %w", err)
	}
	out, err := s.st.Create(rel)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, s.f); err != nil {
		out.Abort()
		return fmt.Errorf("lake: %s/%s: %w", strings.TrimSuffix(s.st.String(), "/"), rel, err)
	}
	return out.Commit()
}

// Abort removes the local file.
func (s *spoolFile) Abort() {
	if s.f != nil {
		s.f.Close()
		os.Remove(s.f.Name())
		s.f = nil
	}
}
