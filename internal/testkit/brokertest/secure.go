package brokertest

import (
	"cmp"
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
	"sync/atomic"
	"testing"
	"time"

	"github.com/yukart/candec/internal/lab/mosquitto"
)

// Secure configures StartSecure.
type Secure struct {
	// User and Password, when User is set, are the one account of the
	// broker, which refuses anonymous clients.
	User, Password string
	// TLS makes the listener TLS, with a certificate for 127.0.0.1
	// signed by a CA made for the test.
	TLS bool
	// ClientCert (which implies TLS) makes the broker require a client
	// certificate signed by the test's CA (mosquitto's
	// require_certificate), and writes one for the clients: its common
	// name is User, or "client" when User is empty.
	ClientCert bool
	// IdentityAsUsername (with ClientCert) makes the certificate's
	// common name the user name (use_identity_as_username): no password
	// file, and a client without a certificate cannot connect at all.
	IdentityAsUsername bool
	// ACL, when not empty, is the text of the broker's ACL file (what
	// each user may read and write: "user car" then "topic write
	// yukart/can/raw" lines). Empty: every client may read and write
	// every topic.
	ACL string
}

// SecureBroker is a mosquitto started by StartSecure.
type SecureBroker struct {
	// URL is mqtt://127.0.0.1:port, or mqtts:// with TLS.
	URL string
	// CAFile is the PEM certificate of the CA that signed the broker's
	// certificate (TLS only).
	CAFile string
	// CertFile and KeyFile are the client certificate and key the
	// broker accepts (ClientCert only).
	CertFile, KeyFile string
	// OtherCAFile is a CA that signed neither certificate: a client
	// that trusts only it refuses the broker (TLS only).
	OtherCAFile string
	// Log is the broker's log.
	Log string
}

// StartSecure starts mosquitto with a password, TLS, a client
// certificate requirement and an ACL file as s says, and stops it when
// the test ends. The embedded broker has neither, so without
// mosquitto (or mosquitto_passwd) the test is skipped, or fails when
// RequireEnv is 1.
func StartSecure(t testing.TB, s Secure) *SecureBroker {
	t.Helper()
	exe, _ := findMosquitto()
	if exe == "" {
		missing(t, "mosquitto")
	}
	dir := t.TempDir()
	o := mosquitto.Options{Binary: exe, Dir: dir, Verbose: true}
	if s.ClientCert {
		s.TLS = true
		o.RequireCertificate, o.IdentityAsUsername = true, s.IdentityAsUsername
	}
	if s.User != "" && !s.IdentityAsUsername {
		passwd, err := exec.LookPath("mosquitto_passwd")
		if err != nil {
			missing(t, "mosquitto_passwd")
		}
		o.PasswordFile = filepath.Join(dir, "passwd")
		if out, err := exec.Command(passwd, "-b", "-c", o.PasswordFile, s.User, s.Password).CombinedOutput(); err != nil {
			t.Fatalf("brokertest: mosquitto_passwd: %v\n%s", err, out)
		}
	}
	if s.ACL != "" {
		o.ACLFile = filepath.Join(dir, "acl")
		if err := os.WriteFile(o.ACLFile, []byte(s.ACL), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b := &SecureBroker{}
	if s.TLS {
		ca := newCA(t, "candec test CA")
		b.CAFile = ca.write(t, dir, "ca.pem")
		o.CAFile = b.CAFile
		o.CertFile, o.KeyFile = ca.issue(t, dir, "server", "127.0.0.1", true)
		b.OtherCAFile = newCA(t, "another CA").write(t, dir, "other-ca.pem")
		if s.ClientCert {
			b.CertFile, b.KeyFile = ca.issue(t, dir, "client", cmp.Or(s.User, "client"), false)
		}
	}
	p := StartMosquitto(t, o)
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

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	der  []byte
	key  *ecdsa.PrivateKey
}

// serial numbers the certificates of a test binary, so that no two of
// one CA share one.
var serial atomic.Int64

func newCA(t testing.TB, name string) *testCA {
	t.Helper()
	key := newKey(t)
	tmpl := template(name)
	tmpl.IsCA = true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	tmpl.BasicConstraintsValid = true
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, der: der, key: key}
}

// newKey makes a P-256 key.
func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// template starts a certificate for cn, valid from an hour ago for a
// day, with the next serial number.
func template(cn string) *x509.Certificate {
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
	}
}

// write writes the CA's certificate to dir/name and returns its path.
func (ca *testCA) write(t testing.TB, dir, name string) string {
	t.Helper()
	return writePEM(t, dir, name, "CERTIFICATE", ca.der)
}

// issue writes a certificate and key signed by ca, for the server
// (127.0.0.1 and localhost) or a client called cn, as dir/base.pem and
// dir/base.key, and returns the two paths.
func (ca *testCA) issue(t testing.TB, dir, base, cn string, server bool) (certFile, keyFile string) {
	t.Helper()
	key := newKey(t)
	tmpl := template(cn)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		tmpl.DNSNames = []string{"localhost"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return writePEM(t, dir, base+".pem", "CERTIFICATE", der), writePEM(t, dir, base+".key", "EC PRIVATE KEY", keyDER)
}

func writePEM(t testing.TB, dir, name, typ string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// CA is a certificate authority made for one test, for brokers and
// clients that StartSecure does not start: a bridge between two
// brokers, each with its own configuration.
type CA struct {
	ca  *testCA
	dir string
	// File is the CA's PEM certificate.
	File string
}

// NewCA makes a CA whose files go in dir.
func NewCA(t testing.TB, dir string) *CA {
	t.Helper()
	ca := newCA(t, "candec test CA")
	return &CA{ca: ca, dir: dir, File: ca.write(t, dir, "ca.pem")}
}

// Server writes a certificate and key for a broker on 127.0.0.1, as
// base.pem and base.key, and returns their paths.
func (c *CA) Server(t testing.TB, base string) (certFile, keyFile string) {
	t.Helper()
	return c.ca.issue(t, c.dir, base, "127.0.0.1", true)
}

// Client writes a client certificate whose common name is cn (with
// use_identity_as_username, the user name), as base.pem and base.key,
// and returns their paths.
func (c *CA) Client(t testing.TB, base, cn string) (certFile, keyFile string) {
	t.Helper()
	return c.ca.issue(t, c.dir, base, cn, false)
}
