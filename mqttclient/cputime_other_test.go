//go:build !unix

package mqttclient

import "testing"

// cpuTime is 0 where getrusage is missing: the benchmark's cpu-ns
// reads 0.
func cpuTime(*testing.B) int64 { return 0 }
