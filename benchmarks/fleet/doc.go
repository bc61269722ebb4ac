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
// # A campaign mid-run
//
// With Config.Campaign every car subscribes to its policy topic, and
// the run pushes the signed campaign there in the measured window, as
// `candec campaign push` does (package rollout; on NATS, as the
// cluster's campaigns user over MQTT 3.1.1, which is all nats-server
// speaks). A car checks what
// comes with the car's checks (campaign.Open, Check, the policy loads)
// and applies it as the service does. The drive of a car the campaign
// is for is made before the run only up to a point before the push
// (CarConfig.LiveFrom); the car keeps its engine and runs the rest of
// its frames as their time comes, so that the campaign changes what it
// publishes from the moment it took it. The result splits the figures
// at the push and counts the committed windows per policy version.
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
