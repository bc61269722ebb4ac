package brokertest

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"

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
	if err := raw.Control(func(fd uintptr) {
		if v, err := unix.IoctlGetInt(int(fd), unix.SIOCINQ); err == nil {
			n = v
		}
	}); err != nil {
		return 0 // closed: nothing waits in it
	}
	return n
}

// sendQueue returns the send queue (bytes written, not yet acknowledged
// by the peer) of this host's TCP socket whose local address is addr,
// an IPv4 host:port, from /proc/net/tcp: 0 when there is no such
// socket (closed), -1 when the system cannot tell.
func sendQueue(addr string) int {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Is4() {
		return -1
	}
	a := ap.Addr().As4()
	// /proc/net/tcp shows the address as the 32-bit word in host
	// (little-endian) order, then the port.
	want := fmt.Sprintf("%02X%02X%02X%02X:%04X", a[3], a[2], a[1], a[0], ap.Port())
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		// sl local rem st tx_queue:rx_queue …
		if len(f) < 5 || f[1] != want {
			continue
		}
		tx, _, ok := strings.Cut(f[4], ":")
		if !ok {
			return -1
		}
		n, err := strconv.ParseUint(tx, 16, 32)
		if err != nil {
			return -1
		}
		return int(n)
	}
	return 0
}
