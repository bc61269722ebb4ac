package ingest

import (
	"math/rand/v2"
	"sync"

	"github.com/yukart/candec/mqttclient"
)

// A takeover of the session: another client connects with the
// instance's client id (a second instance given the same --id, or the
// same certificate on a broker that makes its name the client id) and
// the broker gives it the session. Each would then write what it gets,
// and what one held uncommitted is sent again to the other: written
// twice. The instance stops on the first evidence of one:
//
//   - the broker's DISCONNECT with reason 0x8E, session taken over
//     (MQTT v5; ackSession.ConnectionLost);
//   - a message of a subscription another client made in the session.
//     mosquitto 2.0.11 closes the older connection without a DISCONNECT,
//     so the client cannot tell a takeover from a broker going down;
//     but each run subscribes with a subscription identifier of its own
//     (random), which the broker stamps on the messages of that
//     subscription. Once the instance has had a message of its own
//     subscription, a message stamped with an identifier it has never
//     seen can only be of a subscription made in its session since:
//     another client took it over. (A start first receives what the
//     session held from the previous run, stamped with that run's
//     identifier, before anything of its own, so a restart is no
//     takeover.) An instance reconnecting to a session the broker kept
//     does not subscribe again, so that the session's subscription
//     stays the newer client's, whose messages tell it.

// holdAfterSilentLoss is how long the commits wait after a connection
// the broker closed without a word: long enough for a client fighting
// over the session to have taken it back (it reconnects within
// mqttclient.DefaultReconnectMax), as the connection a service deems
// stable. Whatever the instance held may meanwhile have been sent to
// that client; committing it too would write it twice. The instance
// that tells the takeover stops without committing; the other commits
// once its connection has lasted.
var holdAfterSilentLoss = mqttclient.StableAfter(mqttclient.DefaultReconnectMax)

// maxSubIDsSeen bounds the identifiers remembered: a session sees its
// runs' few.
const maxSubIDsSeen = 64

// subIDs tells a takeover from the subscription identifiers of the
// messages delivered.
type subIDs struct {
	own int // this run's, 1 to 268,435,455 (MQTT's variable byte integer)

	mu      sync.Mutex
	ownSeen bool
	seen    []int
}

func newSubIDs() *subIDs { return &subIDs{own: 1 + rand.IntN(268435455)} }

// foreign reports whether a message stamped id (nil: none) shows that
// another client subscribed in the session.
func (s *subIDs) foreign(id *int) bool {
	if id == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if *id == s.own {
		s.ownSeen = true
		return false
	}
	for _, x := range s.seen {
		if x == *id {
			return false
		}
	}
	if s.ownSeen {
		return true
	}
	if len(s.seen) < maxSubIDsSeen {
		s.seen = append(s.seen, *id)
	}
	return false
}
