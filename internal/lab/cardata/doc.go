// Package cardata is the car's test data built into candec: the kart's
// DBC and its idle capture, the defaults of demo, generate, tune and
// plot, so that an installed binary runs them from any directory.
//
// The files stay where the project keeps them, testdata/yukart.dbc and
// testdata/idle.log, and a command reads them there when they are
// there (a clone's edits take effect). Only where they are missing does
// it take the copies here:
//
//   - yukart.dbc is a copy of testdata/yukart.dbc, which go:embed cannot
//     reach from here; a test requires the two to be equal byte for byte
//     (refresh the copy with go test ./internal/lab/cardata -update);
//   - the capture is not a copy: it is generated from that DBC with the
//     generator's defaults, which is how testdata/idle.log is made, and a
//     test requires the two to be equal byte for byte.
package cardata
