//go:build !linux

package mqttclient

import (
	"errors"
	"net"
)

func noDelay(*net.TCPConn) (bool, error) { return false, errors.New("not on this OS") }
