// Package stack runs the bench's private processes: a mosquitto of its
// own on a free port, and the candec processes (decoder, replay) it
// measures, whose metrics pages it reads (Scrape).
//
// Nothing here touches a broker already running on the machine: the
// private mosquitto listens on 127.0.0.1 on a port the kernel picked,
// with a configuration written to the run's own directory
// (set_tcp_nodelay true, no persistence). Every process is started in
// the foreground of the bench, stopped by its PID (SIGTERM, then SIGKILL
// after a timeout), and killed by the kernel if the bench itself dies
// (Linux's parent-death signal), so no run leaves anything behind. The
// broker itself is started by package internal/lab/mosquitto and every
// process is run by package internal/base/child, which the tests' broker
// shares.
package stack
