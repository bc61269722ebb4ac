package child

import "syscall"

// procAttr makes the kernel kill the child when its parent dies, so that
// a crashed or killed parent leaves no process behind.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
