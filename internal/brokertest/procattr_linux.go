package brokertest

import "syscall"

// procAttr makes the kernel kill mosquitto when the test binary dies, so
// a crashed or killed test leaves no broker behind.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
