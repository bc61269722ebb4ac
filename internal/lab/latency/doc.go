// Package latency records latencies and reports their distribution: the
// percentiles a benchmark quotes (p50, p99, max), a text histogram and a
// percentile table.
//
// # Precision
//
// A Histogram does not keep every sample: a flood run delivers millions of
// frames to several subscribers. It counts samples in log-linear buckets,
// as HdrHistogram does. Values below 256 ns have a bucket each; above
// that, every power of two is split into 128 buckets, so a bucket is at
// most 1/128 of its lower bound wide. A percentile is reported as the
// highest value of its bucket, so it is never below the exact percentile
// and at most 0.8 % above it. The count, minimum, maximum and mean are
// exact. Values up to 2^40 ns (about 18 minutes) are bucketed; larger ones
// land in the top bucket, and Max still reports them exactly.
//
// Recording is a few shifts and an add: no allocation, no lock. A
// Histogram is not safe for concurrent use; give each goroutine its own
// and Merge them.
package latency
