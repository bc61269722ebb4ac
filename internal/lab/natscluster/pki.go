package natscluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// ca is the certificate authority of one run: the fleet's CA for the
// nodes and every client.
type ca struct {
	dir  string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string // its certificate, PEM

	mu     sync.Mutex
	serial int64
}

// newCA makes a CA valid from an hour ago for now+valid and writes its
// certificate to dir/ca.pem.
func newCA(dir string, now time.Time, valid time.Duration) (*ca, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	c := &ca{dir: dir, key: key}
	tmpl := c.template("candec fleet test CA", now, valid)
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	if c.cert, err = x509.ParseCertificate(der); err != nil {
		return nil, err
	}
	c.file = filepath.Join(dir, "ca.pem")
	return c, writePEM(c.file, "CERTIFICATE", der)
}

func (c *ca) template(cn string, now time.Time, valid time.Duration) *x509.Certificate {
	c.mu.Lock()
	c.serial++
	n := c.serial
	c.mu.Unlock()
	return &x509.Certificate{
		SerialNumber: big.NewInt(n),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(valid),
	}
}

// issue writes a certificate for cn signed by c, and its key, as
// dir/base.pem and dir/base.key. A node's (server) is for 127.0.0.1 and
// localhost, and serves both ends of a route.
func (c *ca) issue(base, cn string, server bool, now time.Time, valid time.Duration) (certFile, keyFile string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	tmpl := c.template(cn, now, valid)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		tmpl.DNSNames = []string{"localhost"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		return "", "", fmt.Errorf("natscluster: certificate %s: %w", cn, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", err
	}
	certFile, keyFile = filepath.Join(c.dir, base+".pem"), filepath.Join(c.dir, base+".key")
	if err := writePEM(certFile, "CERTIFICATE", der); err != nil {
		return "", "", err
	}
	return certFile, keyFile, writePEM(keyFile, "EC PRIVATE KEY", keyDER)
}

func writePEM(path, typ string, der []byte) error {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		return fmt.Errorf("natscluster: %w", err)
	}
	return nil
}
