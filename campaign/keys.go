package campaign

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// PEM block types of the key files: PKCS #8 and PKIX, as openssl
// writes Ed25519 keys.
const (
	privateBlock = "PRIVATE KEY"
	publicBlock  = "PUBLIC KEY"
)

// MaxKeyFileSize bounds a key file read whole.
const MaxKeyFileSize = 64 << 10

// NewKey makes a key pair and returns it as PEM files: the private key
// (PKCS #8) and the public key (PKIX).
func NewKey() (private, public []byte, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("campaign: %w", err)
	}
	p8, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, nil, fmt.Errorf("campaign: %w", err)
	}
	px, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, nil, fmt.Errorf("campaign: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: privateBlock, Bytes: p8}),
		pem.EncodeToMemory(&pem.Block{Type: publicBlock, Bytes: px}), nil
}

// ParsePrivateKey reads a private key file (PEM, PKCS #8, Ed25519).
func ParsePrivateKey(data []byte) (ed25519.PrivateKey, error) {
	b, _ := pem.Decode(data)
	if b == nil || b.Type != privateBlock {
		return nil, errors.New("campaign: not a PEM \"" + privateBlock + "\" (make one with candec campaign keygen)")
	}
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("campaign: private key: %w", err)
	}
	ek, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("campaign: private key: a %T, want Ed25519", k)
	}
	return ek, nil
}

// ParsePublicKey reads a public key file (PEM, PKIX, Ed25519).
func ParsePublicKey(data []byte) (ed25519.PublicKey, error) {
	b, _ := pem.Decode(data)
	if b == nil || b.Type != publicBlock {
		return nil, errors.New("campaign: not a PEM \"" + publicBlock + "\" (the .pub file of candec campaign keygen)")
	}
	k, err := x509.ParsePKIXPublicKey(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("campaign: public key: %w", err)
	}
	ek, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("campaign: public key: a %T, want Ed25519", k)
	}
	return ek, nil
}
