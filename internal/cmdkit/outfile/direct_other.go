//go:build !unix

package outfile

import (
	"io/fs"
	"os"
)

// openDirect opens a device or a pipe to write in place.
func openDirect(name string, _ fs.FileInfo) (*os.File, error) {
	return os.OpenFile(name, os.O_WRONLY, 0)
}
