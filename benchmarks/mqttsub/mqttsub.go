package mqttsub

import (
	"context"

	"github.com/yukart/candec/internal/fleet/mqtt311"
	"github.com/yukart/candec/mqttclient"
)

// Errors.
var (
	// ErrProtocol: the broker sent something this client cannot read.
	ErrProtocol = mqtt311.ErrProtocol
	// ErrRefused: the broker refused the connection or a subscription.
	ErrRefused = mqtt311.ErrRefused
	// ErrClosed: the client was closed.
	ErrClosed = mqtt311.ErrClosed
)

// Limits.
const (
	// KeepAlive is the keep-alive the client asks for when its settings
	// give none; it pings at half of it.
	KeepAlive = mqtt311.KeepAlive
	// MaxPacket is the largest packet the client accepts.
	MaxPacket = mqtt311.MaxPacket
)

// Handler receives a message. topic and payload are valid only during
// the call; now is the arrival time in ns since the Unix epoch.
type Handler = mqtt311.Handler

// Client is one subscriber connection.
type Client = mqtt311.Client

// Dial connects to the broker of s (its URL, TLS files, user name and
// password, keep-alive: as every candec client, through mqttclient) as
// s.ClientID with a clean session and starts reading; messages go to h.
func Dial(ctx context.Context, s mqttclient.Settings, h Handler) (*Client, error) {
	return mqtt311.Dial(ctx, s, h)
}
