// Command candec-car is candec as the car runs it, installed by the .deb
// as /usr/bin/candec: the service (run) and the car's tools (decode,
// convert, dbc, replay, watch, generate, version), with the same flags,
// output and exit statuses as the developer's binary (cmd/candec). It
// imports only what the car runs: no bench, demo, plot, tune, ingest or
// Parquet (internal/testkit/layout's TestCarBinary checks its dependencies).
package main

import "github.com/yukart/candec/internal/cmdkit/cli"

func main() { cli.Main(cli.Car) }
