package dbc

import (
	"fmt"
	"os"
)

// Load reads, parses and compiles DBC files into one Database. See
// Parse and Compile for what is tolerated and what is an error.
func Load(paths ...string) (*Database, error) {
	files := make([]*File, 0, len(paths))
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("dbc: %w", err)
		}
		f, err := Parse(path, src)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return Compile(files...)
}

// DuplicateSignalNames returns the signal names that more than one
// message uses, each with its signals in database order. Consumers that
// name things by signal alone (MQTT topics) must qualify these with the
// message name.
func (db *Database) DuplicateSignalNames() map[string][]*Signal {
	byName := make(map[string][]*Signal)
	for _, s := range db.Signals {
		byName[s.Name] = append(byName[s.Name], s)
	}
	for name, ss := range byName {
		if len(ss) < 2 {
			delete(byName, name)
		}
	}
	return byName
}
