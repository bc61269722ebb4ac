// Package child runs a child process that is stopped by its PID: the
// bench's processes and the private mosquitto of the bench and the tests.
//
// Stop sends SIGTERM, then SIGKILL after a timeout. On Linux the kernel
// also kills the child when its parent dies (the parent-death signal),
// so a crashed or killed parent leaves no process behind.
package child
