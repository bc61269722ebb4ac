package brokertest

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
)

// proxyReadBuffer is the receive buffer of the proxy's side of a
// client's connection: small, so that a client writing to a proxy that
// stopped reading soon has its writes blocked.
const proxyReadBuffer = 4 << 10

// Proxy is a TCP proxy in front of a broker, for tests of a broker that
// is connected but stops reading: after StopReading it no longer reads
// what its clients send (their writes block once the socket buffers
// are full), while what the broker sends still reaches them.
type Proxy struct {
	// Addr is the proxy's host:port; URL the same as mqtt://host:port.
	Addr, URL string

	t      testing.TB
	target string
	ln     net.Listener

	mu      sync.Mutex
	stopped bool
	resume  chan struct{} // closed when reading goes on; nil while reading
	conns   []net.Conn    // the clients' connections to the proxy
	toCli   int64         // bytes copied from the broker to the clients
	wg      sync.WaitGroup
}

// StartProxy starts a proxy on a free port of 127.0.0.1 to the broker
// at target (host:port); it is closed, with every connection, when the
// test ends.
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: ln.Addr().String(), URL: "mqtt://" + ln.Addr().String(), t: t, target: target, ln: ln}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// StopReading stops reading what the clients send, on every connection
// made or to come.
func (p *Proxy) StopReading() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.resume == nil {
		p.resume = make(chan struct{})
	}
}

// Backlog returns how many bytes the clients sent that the proxy has
// not read: they wait in its sockets' receive buffers. It is -1 where
// the system cannot tell.
func (p *Proxy) Backlog() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.conns {
		b := unreadBytes(c)
		if b < 0 {
			return -1
		}
		n += b
	}
	return n
}

// ToClients returns how many bytes the proxy has copied from the broker
// to its clients: it grows with each packet the broker sends them.
func (p *Proxy) ToClients() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.toCli
}

// ClientQueue returns how many bytes the clients have written that wait
// in their own sockets, not yet taken by the proxy: once the proxy
// stopped reading and this stops growing, their writes are blocked. It
// is -1 where the system cannot tell.
func (p *Proxy) ClientQueue() int {
	p.mu.Lock()
	var addrs []string
	for i, c := range p.conns {
		if i%2 == 0 { // the clients' side: conns holds client, broker pairs
			addrs = append(addrs, c.RemoteAddr().String())
		}
	}
	p.mu.Unlock()
	n := 0
	for _, a := range addrs {
		q := sendQueue(a)
		if q < 0 {
			return -1
		}
		n += q
	}
	return n
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(proxyReadBuffer)
		}
		b, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.stopped {
			p.mu.Unlock()
			c.Close()
			b.Close()
			return
		}
		p.conns = append(p.conns, c, b)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.copy(b, c, true)
		go p.copy(c, b, false)
	}
}

// copy copies from src to dst; from a client (fromClient), it waits
// while the proxy does not read.
func (p *Proxy) copy(dst, src net.Conn, fromClient bool) {
	defer p.wg.Done()
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, proxyReadBuffer)
	for {
		if fromClient {
			p.mu.Lock()
			resume, stopped := p.resume, p.stopped
			p.mu.Unlock()
			if stopped {
				return
			}
			if resume != nil {
				<-resume // closed by close
				return
			}
		}
		n, err := src.Read(buf)
		if n > 0 && !fromClient {
			p.mu.Lock()
			p.toCli += int64(n)
			p.mu.Unlock()
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				p.t.Logf("proxy: %v", err)
			}
			return
		}
	}
}

// close closes the listener and every connection and waits for the
// proxy's goroutines.
func (p *Proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	p.stopped = true
	if p.resume != nil {
		close(p.resume)
		p.resume = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
