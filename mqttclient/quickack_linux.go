package mqttclient

import (
	"net"
	"syscall"
)

// quickAckConn is a TCP connection that acknowledges what it reads at
// once. Linux delays an ACK by up to 40 ms when it expects to send data
// soon; a broker without TCP_NODELAY then holds its next small packet
// (a PUBACK) until that ACK comes, by Nagle's algorithm. A QoS 1
// publisher waits for each PUBACK, and the raw batches a QoS 0
// subscription brings in between need no reply of their own, so every
// batch could cost a publish 40 ms. Setting TCP_QUICKACK after each read
// sends the pending ACK now.
//
// Writes go straight to the embedded *net.TCPConn, which still writes a
// packet's buffers in one writev.
type quickAckConn struct {
	*net.TCPConn
	rc syscall.RawConn
}

func quickAck(c *net.TCPConn) net.Conn {
	rc, err := c.SyscallConn()
	if err != nil {
		return c
	}
	return &quickAckConn{TCPConn: c, rc: rc}
}

func (c *quickAckConn) Read(p []byte) (int, error) {
	n, err := c.TCPConn.Read(p)
	if n > 0 {
		_ = c.rc.Control(func(fd uintptr) {
			_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_QUICKACK, 1)
		})
	}
	return n, err
}
