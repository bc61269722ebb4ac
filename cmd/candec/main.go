// Command candec decodes CAN traffic into per-signal MQTT topics: the
// developer's and the cloud's binary, with every command. See the README
// for the subcommands; the car's binary is cmd/candec-car.
package main

import (
	"github.com/yukart/candec/internal/cmdkit/cli"
	_ "github.com/yukart/candec/internal/cmdkit/outformat/parquetrow" // decode's Parquet row and lake
)

// commands lists every subcommand, in the order the usage shows them:
// the car's entries (internal/cmdkit/cli) and the developer's own (this
// package's cmd_*.go).
var commands = []cli.Command{
	cli.Run,
	{Name: "demo", Summary: "see it work: replay the car's capture through an embedded broker and the decoder, live", Run: runDemo},
	cli.Decode,
	cli.Convert,
	cli.DBC,
	{Name: "plot", Summary: "plot signals from a capture to SVG or PNG: one panel per unit, with --policy what the service would publish", Run: runPlot},
	{Name: "tune", Summary: "what a policy costs the broker: per-signal envelopes/s from a capture, offline", Run: runTune},
	cli.Replay,
	cli.Watch,
	{Name: "campaign", Summary: "a tuned policy signed and pushed to the fleet's cars: keygen, sign, push, status (docs/campaigns.md)", Run: runCampaign},
	{Name: "ingest", Summary: "the fleet's cloud side: the cars' window streams from the broker into a lake, exactly once (docs/ingest.md)", Run: runIngest},
	cli.Generate,
	{Name: "bench", Summary: "measure candec against a real mosquitto: the report's mix table (see benchmarks/README.md)", Run: runBench},
	cli.Version,
}

func main() { cli.Main(commands) }
