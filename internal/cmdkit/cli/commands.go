package cli

// The entries of the commands this package holds: the car's, which the
// developer's binary links too. Each binary's main lists the entries it
// links, in the order its usage shows them (cmd/candec, cmd/candec-car).
var (
	Run      = Command{"run", "run the decoder service: raw batches in, per-signal envelopes out", runRun}
	Decode   = Command{"decode", "decode a capture with DBC files (offline)", runDecode}
	Convert  = Command{"convert", "convert a capture of any format (ASC, BLF, TRC, MF4, candump, gzip) to a candump -l log", runConvert}
	DBC      = Command{"dbc", "check DBC files and list their messages and signals", runDBC}
	Replay   = Command{"replay", "play a capture as raw batches to the broker, at its own timing, faster, or as a flood", runReplay}
	Watch    = Command{"watch", "show live what the broker carries: per-topic rate, value, age, seq loss, latency", runWatch}
	Generate = Command{"generate", "generate a simulated capture of the kart (candump -l format)", runGenerate}
	Version  = Command{"version", "print the version, the VCS revision and the Go version (also --version)", runVersion}
)

// Car is the car's binary's command table (cmd/candec-car): what runs on
// the car, and nothing that links the lab's or the cloud's packages
// (internal/testkit/layout's TestCarBinary).
var Car = []Command{Run, Decode, Convert, DBC, Replay, Watch, Generate, Version}
