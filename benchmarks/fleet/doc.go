// Package fleet is `candec bench --fleet`: many simulated cars publish
// their window streams, as each car's uplink bridge delivers them,
// through one broker into a group of `candec ingest` instances that
// write one lake; the bench measures what the ingest costs per value
// and per car, how late a value reaches the lake, and what was lost.
//
// # The cars
//
// Every car replays the same capture through candec's own engine
// (package pipeline, the window stream on) from a starting frame of its
// own, drawn from a seed, and with an epoch of its own, so that no two
// cars publish the same windows at the same moment. The drives are
// made before the run (NewCar), so that the bench spends its CPU during
// the run only on sending. A car publishes each window on
// fleet/<car>/yukart/window at QoS 1 when its end comes, on a
// connection of its own, as a bridge would.
//
// # What is measured
//
// The ingest instances are processes of their own (`candec ingest`,
// the bench's own binary), so that their CPU is read apart
// (/proc/<pid>/stat), and so is the broker's. Loss is counted from the
// lake's own commit record: the windows the cars published, less the
// distinct windows the manifests of every instance name; a window
// named twice is a duplicate. Latency is the ingest's: the time from a
// window's end (frame time, which the cars map onto the wall clock) to
// its receipt and to its commit in the lake.
package fleet
