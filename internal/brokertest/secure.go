package brokertest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/yukart/candec/internal/mosquitto"
)

// Secure configures StartSecure.
type Secure struct {
	// User and Password, when User is set, are the one account of the
	// broker, which refuses anonymous clients.
	User, Password string
	// TLS makes the listener TLS, with a certificate for 127.0.0.1
	// signed by a CA made for the test.
	TLS bool
}

// SecureBroker is a mosquitto started by StartSecure.
type SecureBroker struct {
	// URL is mqtt://127.0.0.1:port, or mqtts:// with TLS.
	URL string
	// CAFile is the PEM certificate of the CA that signed the broker's
	// certificate (TLS only).
	CAFile string
	// Log is the broker's log.
	Log string
}

// StartSecure starts mosquitto with a password, TLS, or both, and stops
// it when the test ends. The embedded broker has neither, so without
// mosquitto (or mosquitto_passwd) the test is skipped, or fails when
// RequireEnv is 1.
func StartSecure(t testing.TB, s Secure) *SecureBroker {
	t.Helper()
	exe := findMosquitto()
	if exe == "" {
		missing(t, "mosquitto")
	}
	dir := t.TempDir()
	o := mosquitto.Options{Binary: exe, Dir: dir, Verbose: true}
	if s.User != "" {
		passwd, err := exec.LookPath("mosquitto_passwd")
		if err != nil {
			missing(t, "mosquitto_passwd")
		}
		o.PasswordFile = filepath.Join(dir, "passwd")
		if out, err := exec.Command(passwd, "-b", "-c", o.PasswordFile, s.User, s.Password).CombinedOutput(); err != nil {
			t.Fatalf("brokertest: mosquitto_passwd: %v\n%s", err, out)
		}
	}
	b := &SecureBroker{}
	if s.TLS {
		b.CAFile, o.CertFile, o.KeyFile = writeCerts(t, dir)
		o.CAFile = b.CAFile
	}
	p, err := mosquitto.Start(context.Background(), o)
	if err != nil {
		t.Fatalf("brokertest: %v", err)
	}
	t.Cleanup(func() {
		_ = p.Stop(StopTimeout)
		if t.Failed() {
			t.Logf("mosquitto log:\n%s", mosquitto.LogTail(dir, 30))
		}
	})
	b.URL, b.Log = p.URL, p.Log
	return b
}

func missing(t testing.TB, what string) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("brokertest: %s not found and %s=1", what, RequireEnv)
	}
	t.Skipf("brokertest: %s not found (the embedded broker has neither passwords nor TLS)", what)
}

// writeCerts writes a CA and a server certificate for 127.0.0.1 and
// localhost signed by it, and returns the files: CA, certificate, key.
func writeCerts(t testing.TB, dir string) (caFile, certFile, keyFile string) {
	t.Helper()
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "candec test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, typ string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return write("ca.pem", "CERTIFICATE", caDER), write("server.pem", "CERTIFICATE", der), write("server.key", "EC PRIVATE KEY", keyDER)
}
