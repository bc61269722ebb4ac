package mqttclient

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
)

func TestValidateWraps(t *testing.T) {
	for _, tc := range []struct {
		s    Settings
		key  string
		want error
	}{
		{Settings{Broker: "x"}, "broker", ErrURL},
		{Settings{Broker: "mqtt://b"}, "client_id", ErrSettings},
		{Settings{Broker: "tcp://b", ClientID: "c", CertFile: "c"}, "cert_file", ErrTLS},
		{Settings{Broker: "ssl://b", ClientID: "c", CertFile: "c"}, "cert_file", ErrTLS},
		{Settings{Broker: "mqtt://b", ClientID: "c", KeepAlive: time.Millisecond}, "keepalive", ErrSettings},
	} {
		err := tc.s.Validate()
		var se *SettingError
		if !errors.As(err, &se) || se.Key != tc.key || !errors.Is(err, tc.want) {
			t.Errorf("%+v: got %v, want a SettingError on %s wrapping %v", tc.s, err, tc.key, tc.want)
		}
	}
	if err := (Settings{Broker: "tls://b", ClientID: "c", CertFile: "c", KeyFile: "k"}).Validate(); err != nil {
		t.Errorf("tls:// with a client certificate: %v", err)
	}
}

func TestRefusal(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{autopaho.NewConnackError(errors.New("x"), &paho.Connack{ReasonCode: 0x86}), "bad user name or password (reason code 0x86)"},
		{autopaho.NewConnackError(errors.New("x"), &paho.Connack{ReasonCode: 0x87}), "not authorized"},
		{autopaho.NewConnackError(errors.New("x"), &paho.Connack{ReasonCode: 0x88}), ""}, // server unavailable: try again
		{errors.New("connection refused"), ""},
		{nil, ""},
	} {
		got := Refusal(tc.err)
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("Refusal(%v) = %v, want nil: another attempt may work", tc.err, got)
		case tc.want != "" && (got == nil || !errors.Is(got, ErrRefused) || !strings.Contains(got.Error(), tc.want)):
			t.Errorf("Refusal(%v) = %v, want an ErrRefused saying %q", tc.err, got, tc.want)
		}
	}
}

// TestFinal: what another attempt with the same settings would repeat
// ends a command's wait at once; what may pass does not.
func TestFinal(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		final bool
	}{
		{"refused", autopaho.NewConnackError(errors.New("x"), &paho.Connack{ReasonCode: 0x86}), true},
		{"server unavailable", autopaho.NewConnackError(errors.New("x"), &paho.Connack{ReasonCode: 0x88}), false},
		{"unknown CA", fmt.Errorf("handshake: %w", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), true},
		{"no client certificate", fmt.Errorf("x: %w: %w", ErrNoClientCert, io.EOF), true},
		{"certificate alert", &net.OpError{Op: "remote error", Err: errors.New("tls: bad certificate")}, true},
		{"other alert", &net.OpError{Op: "remote error", Err: errors.New("tls: internal error")}, false},
		{"connection refused", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, false},
		{"nil", nil, false},
	} {
		if got := Final(tc.err) != nil; got != tc.final {
			t.Errorf("%s: Final(%v) != nil is %v, want %v", tc.name, tc.err, got, tc.final)
		}
	}
}

// TestKeyDefaults: each row's default is a value its key takes and
// gives back as the same text, and DefaultSettings is the rows'
// defaults and the client id alone.
func TestKeyDefaults(t *testing.T) {
	want := Settings{Broker: DefaultBroker, ClientID: "me", KeepAlive: DefaultKeepAlive}
	if got := DefaultSettings("me"); got != want {
		t.Errorf("DefaultSettings: got %+v, want %+v", got, want)
	}
	for _, k := range Keys() {
		if k.Default == "" {
			continue
		}
		var s Settings
		if err := k.Set(&s, k.Default); err != nil {
			t.Errorf("%s: default %q refused: %v", k.Name, k.Default, err)
		} else if got := k.Get(&s); got != k.Default {
			t.Errorf("%s: default %q reads back as %q", k.Name, k.Default, got)
		}
	}
}
