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

func TestMain(m *testing.M) {
	if os.Getenv(asCandecEnv) == "1" {
		main() // exits with the command's status on an error
		os.Exit(0)
	}
	os.Exit(m.Run())
}
