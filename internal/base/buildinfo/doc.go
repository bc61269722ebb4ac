// Package buildinfo says what the running binary was built from: the
// module version, the VCS revision and the Go version, as the Go build
// recorded them. `candec version` prints it, the service exports it as
// the candec_build_info metric, and bench results name the build with
// it.
//
// It imports only the standard library, so that `candec version` links
// nothing heavy through it, and every package may import it.
package buildinfo
