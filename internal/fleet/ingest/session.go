package ingest

import (
	"io"
	"sync"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho/session"

	"github.com/yukart/candec/mqttclient"
)

// ackSession is paho's session state with the acknowledgements held
// back: paho acknowledges a QoS 1 message as soon as its handler
// returns, and the ingest acknowledges one only once its rows are
// committed. paho's own manual acknowledgement
// (ClientConfig.EnableManualAcknowledgment) keeps the messages waiting
// in a list that it searches on every message and on every Ack: with
// tens of thousands waiting, as a commit of the window stream has, that
// costs more than the rows. Here a message waits as its packet id, and
// a commit acknowledges its messages in one batch, in the order they
// came, in one write (mqttclient.Batcher).
//
// A packet id means something on the connection it came on only: a
// message is acknowledged only on the connection (generation) that
// delivered it. One delivered on a connection that has dropped is left
// unacknowledged; the broker sends it again on the next (the session
// persists), and the ingest skips it as a window taken already.
// autopaho starts a connection only once the last one's messages have
// all been handed over, so a message's generation, read when it is
// handled, is that of the connection that delivered it.
type ackSession struct {
	session.SessionManager
	batcher *mqttclient.Batcher

	// takenOver is called, once, when the broker ends the connection
	// because another client connected with the instance's client id
	// (MQTT v5 DISCONNECT reason 0x8E). It must not block.
	takenOver func()
	// afterSilentLoss is called when a connection is accepted after one
	// that the broker closed without a DISCONNECT (which may have been
	// a takeover: takeover.go). It must not block.
	afterSilentLoss func()

	mu     sync.Mutex
	gen    uint64 // counts the connections accepted (CONNACK)
	up     bool
	taken  bool // the session was taken over: no reconnection
	told   bool // the broker sent a DISCONNECT on this connection
	silent bool // the last connection ended without one
}

// ConAckReceived starts a connection's generation.
func (s *ackSession) ConAckReceived(w io.Writer, cp *packets.Connect, ca *packets.Connack) error {
	s.mu.Lock()
	s.gen++
	s.up = true
	silent := s.silent && ca.ReasonCode < 0x80
	s.told, s.silent = false, false
	s.mu.Unlock()
	if silent && s.afterSilentLoss != nil {
		s.afterSilentLoss()
	}
	return s.SessionManager.ConAckReceived(w, cp, ca)
}

// ConnectionLost ends it. paho calls it with the broker's DISCONNECT,
// if one came, before the connection is reported down: a takeover is
// known before autopaho could reconnect (and take the session back).
func (s *ackSession) ConnectionLost(dp *packets.Disconnect) error {
	s.mu.Lock()
	if s.up && dp == nil && !s.told {
		s.silent = true
	}
	s.up = false
	s.told = s.told || dp != nil
	taken := dp != nil && dp.ReasonCode == mqttclient.ReasonSessionTakenOver && !s.taken
	s.taken = s.taken || taken
	s.mu.Unlock()
	if taken && s.takenOver != nil {
		s.takenOver()
	}
	return s.SessionManager.ConnectionLost(dp)
}

// wasTakenOver reports whether the session was taken over.
func (s *ackSession) wasTakenOver() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.taken
}

// Ack is paho's acknowledgement when a handler returns: held back for
// QoS 1 (the ingest subscribes at QoS 1 only).
func (s *ackSession) Ack(pb *packets.Publish) error {
	if pb.QoS == 1 {
		return nil
	}
	return s.SessionManager.Ack(pb)
}

// generation returns the current connection's generation.
func (s *ackSession) generation() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

// ackAll acknowledges refs, those of the current connection, in order,
// in one write. It returns how many it sent.
func (s *ackSession) ackAll(refs []ackRef) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.up {
		return 0
	}
	var sent [65536 / 64]uint64 // a packet id once per batch
	s.batcher.Hold()
	n := 0
	for _, r := range refs {
		if r.id == 0 || r.gen != s.gen || sent[r.id/64]&(1<<(r.id%64)) != 0 {
			continue
		}
		sent[r.id/64] |= 1 << (r.id % 64)
		if err := s.SessionManager.Ack(&packets.Publish{QoS: 1, PacketID: r.id}); err != nil {
			break // the connection failed: the broker sends the rest again
		}
		n++
	}
	if s.batcher.Flush() != nil {
		return 0 // not sent: the broker sends them again
	}
	return n
}
