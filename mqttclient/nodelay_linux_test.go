package mqttclient

import (
	"net"
	"syscall"
)

func noDelay(c *net.TCPConn) (bool, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return false, err
	}
	var v int
	var serr error
	if err := rc.Control(func(fd uintptr) {
		v, serr = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_NODELAY)
	}); err != nil {
		return false, err
	}
	return v != 0, serr
}

// tcpConn returns the TCP connection under a connection Dial made.
func tcpConn(c net.Conn) *net.TCPConn {
	c = unwrap(c)
	if q, ok := c.(*quickAckConn); ok {
		return q.TCPConn
	}
	tc, _ := c.(*net.TCPConn)
	return tc
}
