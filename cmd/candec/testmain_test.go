package main

import (
	"os"
	"testing"
)

// asCandecEnv, set to 1, makes the test binary run as candec. The
// bench starts the decoder and the replay from its own executable,
// which in a test is this binary. (Not a CANDEC_ variable: the bench
// clears those for its children.)
const asCandecEnv = "GO_TEST_AS_CANDEC"

// childSetup, when set (by a test file's init), runs in the child
// before main: it sets the limits a test asks for.
var childSetup func()

func TestMain(m *testing.M) {
	if os.Getenv(asCandecEnv) == "1" {
		if childSetup != nil {
			childSetup()
		}
		main() // exits with the command's status on an error
		os.Exit(0)
	}
	os.Exit(m.Run())
}
