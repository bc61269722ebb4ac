package service

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/yukart/candec/mqttclient"
)

// Why the service is not decoding, the label of
// candec_broker_connect_failures_total. Every label exists from the
// start (at 0), so that an alert on one of them has a series to watch.
const (
	// failNetwork: no TCP connection (nothing listens at the broker's
	// address, no route, a name that does not resolve).
	failNetwork = "network"
	// failTLS: the TLS handshake failed (a certificate the CA does not
	// vouch for, a wrong host name, a client certificate refused).
	failTLS = "tls"
	// failAuth: the broker refused the client in its CONNACK (user name
	// or password, client id, banned).
	failAuth = "auth"
	// failACL: connected, but the broker refused the status publish or
	// the raw subscription: the user lacks an ACL right.
	failACL = "acl"
	// failTimeout: an attempt or an operation took too long.
	failTimeout = "timeout"
	// failOther: anything else.
	failOther = "other"
)

// failReasons are the labels, in the order the metric lists them.
var failReasons = []string{failNetwork, failTLS, failAuth, failACL, failTimeout, failOther}

// reasonCodes names the SUBACK and PUBACK reason codes (MQTT v5, 3.9.3
// and 3.4.2.1) a broker refuses an operation with.
var reasonCodes = map[byte]string{
	0x80: "unspecified error",
	0x83: "implementation specific error",
	0x87: "not authorized",
	0x8F: "topic filter invalid",
	0x90: "topic name invalid",
	0x97: "quota exceeded",
	0x99: "payload format invalid",
	0x9E: "shared subscriptions not supported",
	0xA1: "subscription identifiers not supported",
	0xA2: "wildcard subscriptions not supported",
}

// refusedError is the broker refusing an operation of a connection that
// is up, with a SUBACK or PUBACK reason code of 0x80 or more.
type refusedError struct {
	code byte
}

func (e *refusedError) Error() string {
	why := cmp.Or(reasonCodes[e.code], "refused")
	return fmt.Sprintf("refused with reason 0x%02X (%s)", e.code, why)
}

// health is what /healthz says: whether the service is ready (connected
// and subscribed to the raw topic), and if not, why. The MQTT client's
// callbacks and the publisher write it, the HTTP server reads it.
type health struct {
	mu        sync.Mutex
	ready     bool
	connected bool
	reason    string // a failReasons label, empty while none
	cause     string // what went wrong, in a user's terms
	err       string // the error itself
	since     time.Time
}

func (h *health) set(f func(h *health)) {
	h.mu.Lock()
	f(h)
	h.mu.Unlock()
}

// problem records why the service is not ready; since is kept while the
// reason stays the same.
func (h *health) problem(reason, cause string, err error, now time.Time) {
	h.set(func(h *health) {
		if h.reason != reason {
			h.since = now
		}
		h.ready, h.reason, h.cause, h.err = false, reason, cause, err.Error()
	})
}

// up, down and subscribed follow the connection: a new connection
// clears the reason of the last failure; the service is ready once the
// raw subscription is acknowledged.
func (h *health) up() { h.set(func(h *health) { h.connected, h.ready, h.reason = true, false, "" }) }

func (h *health) down() { h.set(func(h *health) { h.connected, h.ready, h.reason = false, false, "" }) }

func (h *health) subscribed() { h.set(func(h *health) { h.ready, h.reason = true, "" }) }

// connectCause classifies a failed connection attempt: its label and
// one phrase that says what to check.
func connectCause(err error) (reason, cause string) {
	var (
		unknownCA x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		verify    *tls.CertificateVerificationError
		alert     tls.AlertError
		record    tls.RecordHeaderError
		netErr    net.Error
		dnsErr    *net.DNSError
	)
	switch {
	case mqttclient.Refusal(err) != nil:
		return failAuth, "the broker refused the client's credentials: check username and the password (CANDEC_PASSWORD), and that client_id is allowed"
	case errors.Is(err, mqttclient.ErrNoClientCert):
		return failTLS, "the broker asks for a client certificate and none was given: set cert_file and key_file"
	case errors.As(err, &unknownCA):
		return failTLS, "the broker's certificate is not signed by a CA in ca_file (or, without ca_file, the system's roots)"
	case errors.As(err, &hostname):
		return failTLS, "the broker's certificate is not for the broker URL's host name"
	case errors.As(err, &invalid), errors.As(err, &verify):
		return failTLS, "the broker's certificate is not valid (expired, or not for a server)"
	case errors.As(err, &alert):
		return failTLS, "the broker refused the handshake (a client certificate missing or not trusted by the broker, or no common TLS version)"
	case errors.As(err, &record):
		return failTLS, "the broker does not speak TLS on this port (use mqtt:// for a plain listener)"
	case errors.Is(err, syscall.ECONNREFUSED):
		return failNetwork, "nothing accepts connections at the broker's address (is mosquitto running, on this port?)"
	case errors.As(err, &dnsErr):
		return failNetwork, "the broker's host name does not resolve"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &netErr) && netErr.Timeout():
		return failTimeout, "the broker did not answer in time"
	case errors.As(err, &netErr):
		return failNetwork, "the network connection to the broker failed"
	}
	return failOther, "the connection attempt failed"
}

// setUpConnection runs announce on a new connection until the broker
// accepts it: a refused status publish or raw subscription (a missing
// ACL right) is reported and tried again with backoff up to
// reconnect_max, as a refused connection is, for as long as the
// connection lasts. Nothing but the subscription brings frames, so
// publishing waits meanwhile.
func (s *Service) setUpConnection(ctx context.Context, engineDone <-chan struct{}, republish bool) {
	wait := retryDelay
	for {
		err := s.announce(ctx, engineDone, &republish)
		var refused *setupError
		if !errors.As(err, &refused) {
			return
		}
		s.m.connectFailures.WithLabelValues(refused.reason).Inc()
		now := s.now()
		s.health.problem(refused.reason, refused.cause(s.cfg.Username), err, now)
		if ok, held := s.setupLog.allow(now); ok {
			s.log.Error(refused.op+" refused; retrying with backoff", "broker", s.cfg.Broker, "topic", refused.topic,
				"cause", refused.cause(s.cfg.Username), "err", refused.err, "reconnect_max", s.cfg.ReconnectMax,
				"suppressed_since_last", held)
		}
		cctx, cancel := s.connection(ctx)
		select {
		case <-cctx.Done():
			cancel()
			return
		case <-time.After(wait):
		}
		cancel()
		wait = min(2*wait, s.cfg.ReconnectMax)
	}
}

// setupError is an operation of a connection's start that failed while
// the connection stayed up.
type setupError struct {
	op, topic string
	reason    string
	err       error
}

func (e *setupError) Error() string { return e.op + " " + e.topic + ": " + e.err.Error() }
func (e *setupError) Unwrap() error { return e.err }

// cause says what to check, for the user the service logs in as.
func (e *setupError) cause(user string) string {
	if e.reason != failACL {
		return "the broker did not answer"
	}
	who := "anonymous clients"
	if user != "" {
		who = "user " + user
	}
	right := "read"
	if e.op == opPublishStatus {
		right = "write"
	}
	return fmt.Sprintf("the broker's ACL does not give %s %s on %s", who, right, e.topic)
}

// Operations of a connection's start.
const (
	opPublishStatus = "publish status"
	opSubscribe     = "subscribe to the raw topic"
	// opSubscribeCampaign: campaign_topic (campaign.go).
	opSubscribeCampaign = "subscribe to the campaign topic"
)

// setupFailed turns the error of a start operation into a *setupError,
// unless the connection dropped (or the service is stopping) under it:
// the connection's own lines say that, at debug level here, and the next
// connection starts over.
func (s *Service) setupFailed(ctx context.Context, op, topic string, err error) error {
	if ctx.Err() != nil {
		s.log.Debug(op, "topic", topic, "err", err)
		return nil
	}
	reason := failTimeout
	var r *refusedError
	if errors.As(err, &r) {
		reason = failACL
	}
	return &setupError{op: op, topic: topic, reason: reason, err: err}
}

// healthz serves /healthz: 200 once the service is connected and
// subscribed to the raw topic, 503 otherwise, with the reason.
func (s *Service) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	s.health.mu.Lock()
	h := health{ready: s.health.ready, connected: s.health.connected, reason: s.health.reason,
		cause: s.health.cause, err: s.health.err, since: s.health.since}
	s.health.mu.Unlock()
	if h.ready {
		fmt.Fprintf(w, "ok: connected to %s, subscribed to %s\n", s.cfg.Broker, s.cfg.RawTopic)
		return
	}
	w.WriteHeader(http.StatusServiceUnavailable)
	switch {
	case h.reason != "" && h.connected:
		fmt.Fprintf(w, "connected to %s but not decoding: %s: %s (since %s; %s); retrying (backoff up to %v)\n",
			s.cfg.Broker, h.reason, h.cause, h.since.UTC().Format(time.RFC3339), h.err, s.cfg.ReconnectMax)
	case h.reason != "":
		fmt.Fprintf(w, "not connected to %s: %s: %s (since %s; %s); retrying (backoff up to %v)\n",
			s.cfg.Broker, h.reason, h.cause, h.since.UTC().Format(time.RFC3339), h.err, s.cfg.ReconnectMax)
	case h.connected:
		fmt.Fprintf(w, "connected to %s, subscribing to %s\n", s.cfg.Broker, s.cfg.RawTopic)
	default:
		fmt.Fprintf(w, "not connected to %s; retrying (backoff up to %v)\n", s.cfg.Broker, s.cfg.ReconnectMax)
	}
}
