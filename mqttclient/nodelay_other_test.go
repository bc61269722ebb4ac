//go:build !linux

package mqttclient

import (
	"errors"
	"net"
)

func noDelay(*net.TCPConn) (bool, error) { return false, errors.New("not on this OS") }

// tcpConn returns the TCP connection under a connection Dial made.
func tcpConn(c net.Conn) *net.TCPConn {
	c = unwrap(c)
	tc, _ := c.(*net.TCPConn)
	return tc
}
