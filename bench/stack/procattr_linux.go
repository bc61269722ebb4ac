package stack

import "syscall"

// procAttr makes the kernel kill a child when the bench dies, so that a
// crashed or killed bench leaves no process behind.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
