// Package layout holds the test of the repository's shape: which folders
// the top level has and which packages may import which.
//
// # The rule
//
// The top level holds the libraries another Go program on the car would
// import, and the folders of the design card:
//
//	frame, dbc, decoder, capture,      the libraries: they import only
//	rawbatch, envelope, pipeline,      each other (and outside modules)
//	mqttclient, mqttclient/wire,
//	campaign
//	service                            the decoder service: libraries only
//	cmd/candec                         the developer's and the cloud's binary: every command
//	cmd/candec-car                     the car's binary (the .deb's): the car's commands
//	internal/…                         what only the binaries need, in
//	                                   groups (internal/README.md is the
//	                                   floor plan; TestInternalFloorPlan
//	                                   keeps it true): cmdkit (the
//	                                   commands, cmdkit/cli their one
//	                                   registry), fleet, tune, lab, testkit
//	internal/base/…                    shared: every package may import
//	                                   them; they import only the standard
//	                                   library and each other
//	benchmarks/…                       the bench harness, its scenarios
//	                                   and results
//	examples/…                         programs another team would
//	                                   write: libraries only
//	deploy, docs, testdata             no Go code (examples/ holds
//	                                   configs too)
//
// Non-test code of a library, of service or of an example never
// imports internal/, benchmarks/ or cmd/; a library or an example never
// imports service. Tests of a library, of service or of an example may
// use internal/ helpers (a real mosquitto, the bridge's replay) but
// never the bench or service from a library.
//
// # Functions read in one sitting
//
// TestFunctionLength fails on a function outside tests longer than 80
// lines, from func to its closing brace: name its steps as functions
// instead. Its allow-list holds only functions being split by a change
// in flight; TestFunctionLengthCatches shows the check can fail.
//
// # The car's binary
//
// The car's binary (cmd/candec-car, the one the .deb holds) links none
// of the lab or the cloud: the bench harness (benchmarks/), the demo and
// its embedded broker (internal/lab/demo, internal/lab/broker, mochi), plotting
// (internal/lab/plot, internal/lab/chart, gonum/plot), the tuner (internal/tune),
// the ingest (internal/fleet/ingest) and Parquet (internal/cmdkit/outformat/parquetrow,
// internal/fleet/lake, parquet-go). It keeps them out by its imports alone:
// its main lists the car's commands (internal/cmdkit/cli's Car), and no build
// tag is involved. TestCarBinary lists its packages with go list -deps;
// TestCarRuleCatchesBreaks shows the rule failing the developer's binary
// (cmd/candec), which links them all.
//
// # Boundaries
//
// Some imports the tiers allow would still drag the binary into every
// program that imports a library: mqttclient imports no flag (candec's
// flags and CANDEC_ variables are internal/cmdkit/brokerflags'), pipeline no
// capture (RunOffline takes a one-method pipeline.Source). TestBoundaries
// checks them; TestBoundariesCatchBreaks shows that each can fail.
//
// # The threat model's tests
//
// docs/security.md names, for each guarantee, the test that shows it, as
// `package: TestName`. TestSecurityDocTests fails when a named test or
// fuzzer does not exist in the package named, so that a renamed or
// removed test cannot leave a guarantee without its proof.
package layout
