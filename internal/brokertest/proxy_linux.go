package brokertest

import (
	"net"

	"golang.org/x/sys/unix"
)

// unreadBytes returns how many received bytes wait in c's socket: -1
// when it cannot tell.
func unreadBytes(c net.Conn) int {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return -1
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return -1
	}
	n := -1
	_ = raw.Control(func(fd uintptr) {
		if v, err := unix.IoctlGetInt(int(fd), unix.SIOCINQ); err == nil {
			n = v
		}
	})
	return n
}
