//go:build !linux

package mqttclient

import "net"

// quickAck leaves c as it is: TCP_QUICKACK is Linux's.
func quickAck(c *net.TCPConn) net.Conn { return c }

// tcpConn returns the TCP connection under a connection Dial made.
func tcpConn(c net.Conn) *net.TCPConn {
	c = unwrap(c)
	tc, _ := c.(*net.TCPConn)
	return tc
}
