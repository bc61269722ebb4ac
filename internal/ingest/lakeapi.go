package ingest

import (
	"errors"

	"github.com/yukart/candec/internal/lake"
)

// escape is the lake's escape of a name into a path element.
func escape(s string) string {
	const hex = "0123456789ABCDEF"
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' && i > 0
		if ok {
			b = append(b, c)
		} else {
			b = append(b, '%', hex[c>>4], hex[c&15])
		}
	}
	return string(b)
}

// openedLake is an open lake as the ingest uses it.
type openedLake struct {
	store     lake.Store
	newWriter func(prefix string) tableWriter
	close     func() error
}

// openLake opens cfg's lake, shared with the other instances.
func openLake(cfg Config) (openedLake, error) {
	return openedLake{}, errors.New("ingest: the lake cannot be shared yet")
}
