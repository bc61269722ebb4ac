package service

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/yukart/candec/internal/testkit/brokertest"
)

// TestNotDecodingSaysWhy: against mosquitto, a wrong CA, a wrong
// password and a missing ACL right (the status publish refused with
// PUBACK 0x87), and against a broker that checks subscriptions the raw
// subscription refused with SUBACK 0x87, each keep the
// service retrying, and it says why: one log line naming the cause, the
// reason's counter, and /healthz answering 503 with the reason.
func TestNotDecodingSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config func(t *testing.T, c *Config)
		reason string
		log    string // in the one line about it
		health []string
	}{
		{
			name: "wrong CA",
			config: func(t *testing.T, c *Config) {
				b := brokertest.StartSecure(t, brokertest.Secure{TLS: true})
				other := brokertest.StartSecure(t, brokertest.Secure{TLS: true})
				c.Broker, c.CAFile = b.URL, other.CAFile
			},
			reason: failTLS,
			log:    "connect failed; retrying with backoff",
			health: []string{"not connected to", "tls: the broker's certificate is not signed by a CA in ca_file", "x509: certificate signed by unknown authority", "retrying"},
		},
		{
			name: "wrong password",
			config: func(t *testing.T, c *Config) {
				b := brokertest.StartSecure(t, brokertest.Secure{User: "candec", Password: "right"})
				c.Broker, c.Username, c.Password = b.URL, "candec", "wrong"
			},
			reason: failAuth,
			log:    "connect failed; retrying with backoff",
			health: []string{"not connected to", "auth: the broker refused the client's credentials", "retrying"},
		},
		{
			// mosquitto 2.0's acl_file grants every subscription and
			// only leaves out what the user may not read; brokers that
			// check subscriptions (mochi, mosquitto with an auth plugin)
			// answer SUBACK 0x87.
			name: "raw subscription refused",
			config: func(t *testing.T, c *Config) {
				c.Broker = refusingBroker(t, DefaultRawTopic)
			},
			reason: failACL,
			log:    "subscribe to the raw topic refused; retrying with backoff",
			health: []string{"connected to", "but not decoding: acl: the broker's ACL does not give anonymous clients read on yukart/can/raw", "0x87 (not authorized)", "retrying"},
		},
		{
			name: "no write right on the status topic",
			config: func(t *testing.T, c *Config) {
				// The shipped ACL; a reader's account.
				c.Broker = deployBroker(t, "dashboard")
				c.Username, c.Password = "dashboard", "dashboard-secret"
			},
			reason: failACL,
			log:    "publish status refused; retrying with backoff",
			health: []string{"but not decoding: acl: the broker's ACL does not give user dashboard write on yukart/decoder/status", "0x87 (not authorized)"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, "")
			tc.config(t, &cfg)
			var log lineLog
			r := startServiceLog(t, cfg, loadTestDB(t), &log, slog.LevelInfo)
			c := r.m.connectFailures.WithLabelValues(tc.reason)
			waitUntil(t, "three failures", func() bool { return counter(t, c) >= 3 })
			rec := httptest.NewRecorder()
			r.httpHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
			body := rec.Body.String()
			if rec.Code != http.StatusServiceUnavailable {
				t.Errorf("/healthz: got %d %q, want 503", rec.Code, body)
			}
			for _, want := range tc.health {
				if !strings.Contains(body, want) {
					t.Errorf("/healthz: got %q, want it to contain %q", body, want)
				}
			}
			said := 0
			for _, l := range log.all() {
				if strings.Contains(l, tc.log) {
					said++
					if !strings.Contains(l, "cause=") {
						t.Errorf("the line %q names no cause", l)
					}
				}
			}
			if said != 1 {
				t.Errorf("%q: in %d log lines over %v failures, want 1 (rate-limited):\n%s", tc.log, said, counter(t, c), strings.Join(log.all(), "\n"))
			}
		})
	}
}

// refusingBroker starts an embedded broker that refuses subscriptions
// to filter (SUBACK 0x87) and allows everything else.
func refusingBroker(t *testing.T, filter string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := mqtt.New(&mqtt.Options{Logger: slog.New(slog.DiscardHandler)})
	if err := srv.AddHook(&denyRead{filter: filter}, nil); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddListener(listeners.NewNet("tcp", ln)); err != nil {
		t.Fatal(err)
	}
	if err := srv.Serve(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return "mqtt://" + ln.Addr().String()
}

// denyRead lets every client in and refuses reading one filter.
type denyRead struct {
	mqtt.HookBase
	filter string
}

func (h *denyRead) ID() string { return "deny-read" }

func (h *denyRead) Provides(b byte) bool {
	return b == mqtt.OnConnectAuthenticate || b == mqtt.OnACLCheck
}

func (h *denyRead) OnConnectAuthenticate(*mqtt.Client, packets.Packet) bool { return true }

func (h *denyRead) OnACLCheck(_ *mqtt.Client, topic string, write bool) bool {
	return write || topic != h.filter
}
