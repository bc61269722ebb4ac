// Package simulate generates CAN captures of the yukart electric kart:
// deterministic, seeded, at each message's cycle time, with values that
// move the way a real car's do.
//
// # What it sends
//
// Every message of a DBC database that has a cycle time (GenMsgCycleTime)
// is sent at that cycle from a random phase, with a small random jitter.
// The bus is modelled at its bit rate: frames that become ready while the
// bus is busy wait, and among waiting frames the lowest ID wins
// arbitration, so timestamps strictly increase as on a real bus. A
// multiplexed message cycles through its multiplexer values frame by
// frame (nested multiplexers included), rolling counters count, and
// checksums are computed (CRC-8 SAE J1850 over the other bytes).
//
// # Where the values come from
//
// A small model of the kart (driver, motion, motor, inverter, battery
// cells, temperatures, cooling) is advanced in 5 ms steps. Each signal of
// the yukart DBC reads the model through an entry in a table keyed by
// signal name: a sensor adds Gaussian noise (more with speed where
// vibration matters), a temperature wanders by a slow random walk on top
// of its thermal model, a state or a command is exact. Signals the table
// does not know (another car's DBC) get a model from their definition:
// counters and checksums by name, states from their value table, any
// other value resting inside its range with a flicker of noise.
//
// # Scenarios
//
// Idle is the kart parked in neutral with the motor idling: wheel speeds
// read zero but for a quantum now and then, noise on every sensor,
// temperatures drifting by tenths of a degree. Drive starts the same way,
// then pulls away and laps a track.
//
// # Determinism
//
// The same database, seed and options give the same capture byte for
// byte: the package uses its own random generator (math/rand's derived
// methods may change between Go versions), draws each message and
// signal from its own stream keyed by name, and takes all time from the
// options. testdata/idle.log is pinned by a test that regenerates it.
package simulate
