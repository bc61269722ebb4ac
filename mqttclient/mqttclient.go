package mqttclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/yukart/candec/internal/base/readfile"
)

// Defaults filled in by Config.AutopahoConfig.
const (
	// DefaultKeepAlive is the MQTT keep-alive interval.
	DefaultKeepAlive = 30 * time.Second
	// DefaultConnectTimeout bounds one connection attempt.
	DefaultConnectTimeout = 10 * time.Second
	// DefaultReconnectMax is the longest wait between two attempts.
	DefaultReconnectMax = 5 * time.Second
	// DefaultDisconnectTimeout bounds the end of a connection (see
	// Config.DisconnectTimeout).
	DefaultDisconnectTimeout = time.Second
	// minReconnect is the first wait after a failed attempt.
	minReconnect = 100 * time.Millisecond
)

// Errors.
var (
	// ErrURL: the broker URL cannot be used.
	ErrURL = errors.New("mqttclient: bad broker URL")
	// ErrTLS: the TLS files cannot be used.
	ErrTLS = errors.New("mqttclient: bad TLS setup")
	// ErrRefused: the broker refused the client for a reason another
	// attempt will not change (see Refusal).
	ErrRefused = errors.New("mqttclient: the broker refused the connection")
	// ErrNoClientCert: the broker asked for a client certificate, the
	// client had none to give, and the broker closed the connection
	// before it answered.
	ErrNoClientCert = errors.New("mqttclient: the broker asked for a client certificate and none was given (cert_file and key_file)")
)

// refusals are the CONNACK reason codes (MQTT v5, 3.2.2.2) that refuse
// the client itself: its id, its credentials, its rights.
var refusals = map[byte]string{
	0x85: "client id not valid",
	0x86: "bad user name or password",
	0x87: "not authorized (mosquitto's answer to a wrong user name or password too)",
	0x8A: "banned",
	0x8C: "bad authentication method",
}

// Refusal returns an error wrapping ErrRefused that names the reason
// when err, a failed attempt (Config.OnConnectError), is the broker
// refusing the client's id, credentials or rights; otherwise nil.
// Retrying such an attempt only repeats it, so a command that waits for
// its first connection stops at once.
func Refusal(err error) error {
	var ce *autopaho.ConnackError
	if !errors.As(err, &ce) {
		return nil
	}
	why, ok := refusals[ce.ReasonCode]
	if !ok {
		return nil
	}
	if ce.Reason != "" {
		why += ": " + ce.Reason
	}
	return &refusedError{why: fmt.Sprintf("%s (reason code 0x%02X)", why, ce.ReasonCode)}
}

// refusedError is ErrRefused with the reason; url: why names the broker
// and says it refused.
type refusedError struct {
	why string
	url bool
}

func (e *refusedError) Error() string {
	if e.url {
		return e.why
	}
	return ErrRefused.Error() + ": " + e.why
}
func (e *refusedError) Unwrap() error { return ErrRefused }

// Message is a will message. (It has no content type: paho.golang
// v0.23 leaves a will's properties other than the delay and expiry out
// of the CONNECT packet.)
type Message struct {
	Topic   string
	Payload []byte
	QoS     byte
	Retain  bool
}

// Config describes one connection to a broker: the Settings a person
// gives, and what the program decides.
type Config struct {
	Settings
	// ConnectTimeout bounds one attempt; default DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// ReconnectMax is the longest wait between attempts; default
	// DefaultReconnectMax.
	ReconnectMax time.Duration
	// DisconnectTimeout bounds the end of a connection: once the
	// context given to Connect ends or Disconnect is called, the
	// DISCONNECT and any write under way have this long, then the
	// socket is closed, whatever the broker does. A broker that stopped
	// reading (a write blocked on its full socket buffers) cannot hold
	// the client longer. Default DefaultDisconnectTimeout.
	DisconnectTimeout time.Duration
	// WriteTimeout, when not 0, bounds each write to the broker: a
	// write the broker has not taken within it fails, and the socket
	// is closed (the client reconnects). Without it, a write blocked
	// on a broker that stopped reading waits until the keep-alive
	// gives the connection up (two periods) or it is asked to end.
	WriteTimeout time.Duration
	// Will is published by the broker when the connection drops without
	// a clean DISCONNECT.
	Will *Message
	// OnUp is called on every (re)connection, from autopaho's goroutine:
	// it must not block.
	OnUp func(*autopaho.ConnectionManager, *paho.Connack)
	// OnDown is called when the connection drops; it must not block.
	OnDown func()
	// OnConnectError is called when an attempt fails; it must not block.
	OnConnectError func(error)
	// OnServerDisconnect is called when the broker ends the connection
	// with a DISCONNECT packet, with its reason code
	// (ReasonSessionTakenOver: another client connected with the same
	// client id). OnConnectionLost is called when the connection fails
	// otherwise, with the error (io.EOF: the broker closed it without a
	// DISCONNECT, as mosquitto 2.0 does to the older of two connections
	// with one client id). One of the two is called per lost connection,
	// on its own goroutine, before or after OnDown; neither may block.
	OnServerDisconnect func(reason byte)
	OnConnectionLost   func(error)
	// Batcher, when not nil, lets a publisher send many packets in one
	// write (see Batcher).
	Batcher *Batcher
	// OnPublish receives every message; it is called from paho's single
	// receiving goroutine and must not block for long. The Publish and
	// its payload belong to the callee.
	OnPublish func(*paho.Publish)
}

// AutopahoConfig builds the autopaho configuration: server URL, TLS,
// credentials, the no-delay dialer, backoff, will and callbacks.
func (c Config) AutopahoConfig() (autopaho.ClientConfig, error) {
	u, err := ParseURL(c.Broker)
	if err != nil {
		return autopaho.ClientConfig{}, err
	}
	if c.KeepAlive != 0 {
		if err := checkKeepAlive(c.KeepAlive); err != nil {
			return autopaho.ClientConfig{}, &SettingError{Key: "keepalive", Msg: err.Error(), Err: ErrSettings}
		}
	}
	tlsCfg, err := c.tlsConfig(u)
	if err != nil {
		return autopaho.ClientConfig{}, err
	}
	keepAlive := orDefault(c.KeepAlive, DefaultKeepAlive)
	connectTimeout := orDefault(c.ConnectTimeout, DefaultConnectTimeout)
	reconnectMax := orDefault(c.ReconnectMax, DefaultReconnectMax)
	disconnectTimeout := orDefault(c.DisconnectTimeout, DefaultDisconnectTimeout)
	writeTimeout := max(c.WriteTimeout, 0)
	sched := newSchedule(min(minReconnect, reconnectMax), reconnectMax)
	user, pass := c.User()
	cfg := autopaho.ClientConfig{
		ServerUrls:                    []*url.URL{u},
		TlsCfg:                        tlsCfg,
		KeepAlive:                     uint16(min(keepAlive/time.Second, MaxKeepAlive/time.Second)),
		CleanStartOnInitialConnection: true,
		ReconnectBackoff:              sched.wait,
		ConnectTimeout:                connectTimeout,
		ConnectUsername:               user,
		ConnectPassword:               []byte(pass),
		OnConnectionUp: func(cm *autopaho.ConnectionManager, ca *paho.Connack) {
			sched.up()
			if c.OnUp != nil {
				c.OnUp(cm, ca)
			}
		},
		OnConnectError: c.OnConnectError,
		AttemptConnection: func(ctx context.Context, _ autopaho.ClientConfig, u *url.URL) (net.Conn, error) {
			// ctx is the connection manager's: it ends when its own
			// context does or Disconnect is called.
			dctx, cancel := context.WithTimeout(ctx, connectTimeout)
			defer cancel()
			nc, err := Dial(dctx, u, tlsCfg)
			if c, ok := nc.(*conn); ok && err == nil {
				c.writeTimeout = writeTimeout
				c.endWith(ctx, disconnectTimeout)
			}
			return nc, err
		},
		ClientConfig: paho.ClientConfig{ClientID: c.ClientID},
	}
	if on := c.OnConnectionLost; on != nil {
		cfg.OnClientError = on
	}
	if on := c.OnServerDisconnect; on != nil {
		cfg.OnServerDisconnect = func(d *paho.Disconnect) { on(d.ReasonCode) }
	}
	if c.OnDown != nil {
		cfg.OnConnectionDown = func() bool { c.OnDown(); return true }
	}
	if c.Will != nil {
		cfg.WillMessage = &paho.WillMessage{Topic: c.Will.Topic, Payload: c.Will.Payload, QoS: c.Will.QoS, Retain: c.Will.Retain}
		cfg.WillProperties = &paho.WillProperties{}
	}
	if c.Batcher != nil {
		c.Batcher.install(&cfg)
	}
	if c.OnPublish != nil {
		on := c.OnPublish
		cfg.OnPublishReceived = []func(paho.PublishReceived) (bool, error){
			func(pr paho.PublishReceived) (bool, error) {
				on(pr.Packet)
				return true, nil
			},
		}
	}
	return cfg, nil
}

// Connect starts an auto-reconnecting connection; it lives until ctx ends
// or Disconnect is called on the returned manager.
func Connect(ctx context.Context, c Config) (*autopaho.ConnectionManager, error) {
	cfg, err := c.AutopahoConfig()
	if err != nil {
		return nil, err
	}
	cm, err := autopaho.NewConnection(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("mqttclient: %w", err)
	}
	return cm, nil
}

// ParseURL checks a broker URL and fills in the default port.
func ParseURL(raw string) (*url.URL, error) {
	if !strings.Contains(raw, "://") {
		// url.Parse reads "127.0.0.1:1883" as a path and says "first
		// path segment in URL cannot contain colon".
		return nil, fmt.Errorf("%w %q: must be mqtt://host:port or mqtts://host:port", ErrURL, raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrURL, raw, err)
	}
	if s := strings.ToLower(u.Scheme); s != "mqtt" && s != "tcp" && !isTLS(u) {
		return nil, fmt.Errorf("%w %q: scheme must be mqtt:// or mqtts://", ErrURL, raw)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("%w %q: no host", ErrURL, raw)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%w %q: unexpected path or query", ErrURL, raw)
	}
	if u.Port() == "" {
		port := "1883"
		if isTLS(u) {
			port = "8883"
		}
		u.Host = net.JoinHostPort(u.Hostname(), port)
	}
	return u, nil
}

// isTLS is the one place that knows which schemes mean TLS.
func isTLS(u *url.URL) bool {
	switch strings.ToLower(u.Scheme) {
	case "mqtts", "ssl", "tls":
		return true
	}
	return false
}

// MaxPEMFileSize is the largest PEM file TLSConfig reads (a CA bundle,
// a certificate, a key): 4 MiB, several times the largest public CA
// bundle. A bigger file, or one that is not a regular file, is refused
// unread.
const MaxPEMFileSize = 4 << 20

// TLSConfig builds a client TLS configuration from PEM files: caFile (the
// system roots when empty), and a client certificate when certFile and
// keyFile are given.
func TLSConfig(caFile, certFile, keyFile string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := readfile.Read(context.Background(), caFile, MaxPEMFileSize)
		if err != nil {
			return nil, fmt.Errorf("%w: CA file: %v", ErrTLS, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: CA file %s: no PEM certificate in it", ErrTLS, caFile)
		}
		cfg.RootCAs = pool
	}
	if (certFile == "") != (keyFile == "") {
		return nil, fmt.Errorf("%w: a client certificate needs both the certificate and the key file", ErrTLS)
	}
	if certFile != "" {
		certPEM, err := readfile.Read(context.Background(), certFile, MaxPEMFileSize)
		if err != nil {
			return nil, fmt.Errorf("%w: client certificate: %v", ErrTLS, err)
		}
		keyPEM, err := readfile.Read(context.Background(), keyFile, MaxPEMFileSize)
		if err != nil {
			return nil, fmt.Errorf("%w: client key: %v", ErrTLS, err)
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("%w: client certificate %s, key %s: %v", ErrTLS, certFile, keyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// Dial opens the network connection to the broker at u, with TCP_NODELAY
// set, and TLS when tlsCfg is not nil. The connection writes each MQTT
// packet paho writes in one write (paho writes a packet's header and
// body apart, and locks the connection around them), several at once
// while a Batcher holds it, and reads through a buffer.
func Dial(ctx context.Context, u *url.URL, tlsCfg *tls.Config) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		if err := tc.SetNoDelay(true); err != nil {
			c.Close()
			return nil, fmt.Errorf("mqttclient: set TCP_NODELAY: %w", err)
		}
		c = quickAck(tc)
	}
	if tlsCfg == nil {
		return newConn(c), nil
	}
	// A broker that requires a client certificate (mosquitto's
	// require_certificate) refuses a client without one only after the
	// client's side of a TLS 1.3 handshake is over: the client learns it
	// as an alert or a reset on its first read or write. Noting whether
	// the broker asked for one lets those errors say what is missing.
	var asked atomic.Bool
	if len(tlsCfg.Certificates) == 0 && tlsCfg.GetClientCertificate == nil {
		tlsCfg = tlsCfg.Clone()
		tlsCfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			asked.Store(true)
			return &tls.Certificate{}, nil // none: the broker decides
		}
	}
	tc := tls.Client(c, tlsCfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		if asked.Load() {
			err = fmt.Errorf("%w: %w", ErrNoClientCert, err)
		}
		return nil, fmt.Errorf("mqttclient: TLS handshake with %s: %w", u.Host, err)
	}
	var conn net.Conn = tc
	if asked.Load() {
		conn = &certlessConn{Conn: tc}
	}
	return newConn(conn), nil
}

// certlessConn is a TLS connection on which the broker asked for a
// client certificate that the client did not have. Until the broker
// has sent a byte, it has not accepted the handshake, and a failed read
// or write is most likely its refusal: the error then wraps
// ErrNoClientCert as well.
type certlessConn struct {
	net.Conn
	answered atomic.Bool
}

func (c *certlessConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.answered.Store(true)
	}
	return n, c.explain(err)
}

func (c *certlessConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	return n, c.explain(err)
}

func (c *certlessConn) explain(err error) error {
	if err == nil || c.answered.Load() {
		return err
	}
	return fmt.Errorf("%w: %w", ErrNoClientCert, err)
}

// Final returns an error when err, a failed attempt
// (Config.OnConnectError), will fail again the same way however often
// it is tried with the same settings: the broker refusing the client
// (Refusal), the client refusing the broker's certificate (a wrong CA
// file, a certificate for another host), the broker refusing the
// client's certificate or its lack of one. Otherwise it returns nil.
// A command waiting for its first connection stops at once on such an
// error; the service, which runs for days, keeps trying, since the
// broker's configuration may change.
func Final(err error) error {
	if r := Refusal(err); r != nil {
		return r
	}
	var (
		unknownCA x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		verify    *tls.CertificateVerificationError
		op        *net.OpError
	)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNoClientCert),
		errors.As(err, &unknownCA), errors.As(err, &hostname),
		errors.As(err, &invalid), errors.As(err, &verify):
		return err
	case errors.As(err, &op) && op.Op == "remote error" && strings.Contains(op.Err.Error(), "certificate"):
		// A TLS alert from the broker about the client's certificate
		// (bad certificate, unknown CA, expired, …); crypto/tls gives
		// its type no name outside the package.
		return err
	}
	return nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
