//go:build !linux

package brokertest

import "net"

// unreadBytes cannot tell here.
func unreadBytes(net.Conn) int { return -1 }

// sendQueue cannot tell here.
func sendQueue(string) int { return -1 }
