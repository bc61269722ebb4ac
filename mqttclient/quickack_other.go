//go:build !linux

package mqttclient

import "net"

// quickAck leaves c as it is: TCP_QUICKACK is Linux's.
func quickAck(c *net.TCPConn) net.Conn { return c }
