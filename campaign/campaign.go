package campaign

import (
	"cmp"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"
	"unicode/utf8"
)

// Format names the body's format; a body of another is refused.
const Format = "candec-campaign-1"

// Context starts every signed message (then the body): a signature of
// the campaign key over anything else is never a campaign's.
const Context = "candec campaign signature v1\x00"

// MaxVersion is the highest version: 2^53, the largest integer every
// JSON reader keeps exactly (and within the lake's INT64 column).
const MaxVersion = 1 << 53

// MaxSize is the largest campaign a car takes: 256 KiB, a quarter of
// the fleet broker's largest message (deploy/mosquitto/fleet.conf's
// message_size_limit). A tuned policy is a few kB.
const MaxSize = 256 << 10

// Reason says why a campaign was refused; it is the label of the car's
// candec_campaigns_total and the "reason" of its acknowledgement.
type Reason string

// The reasons, in the order the checks run.
const (
	ReasonSize      Reason = "size"       // over MaxSize
	ReasonFormat    Reason = "format"     // not a campaign
	ReasonKey       Reason = "key"        // signed by another key
	ReasonSignature Reason = "signature"  // the signature does not verify
	ReasonVehicle   Reason = "vehicle"    // not for this vehicle
	ReasonVersion   Reason = "version"    // not newer than the applied one
	ReasonDBC       Reason = "dbc"        // tuned for other DBC files
	ReasonNotBefore Reason = "not_before" // not valid yet
	ReasonPolicy    Reason = "policy"     // the policy does not load
)

// Reasons lists every Reason, in the order the checks run.
var Reasons = []Reason{ReasonSize, ReasonFormat, ReasonKey, ReasonSignature, ReasonVehicle,
	ReasonVersion, ReasonDBC, ReasonNotBefore, ReasonPolicy}

// ErrRefused is wrapped by every *Refusal.
var ErrRefused = errors.New("campaign: refused")

// Refusal is a campaign refused: the reason, and what was wrong.
type Refusal struct {
	Reason Reason
	Msg    string
}

// Error reads like "campaign refused (version): version 3 is not newer
// than the applied version 4".
func (r *Refusal) Error() string { return "campaign refused (" + string(r.Reason) + "): " + r.Msg }

// Unwrap returns ErrRefused.
func (r *Refusal) Unwrap() error { return ErrRefused }

func refuse(reason Reason, format string, args ...any) *Refusal {
	return &Refusal{Reason: reason, Msg: fmt.Sprintf(format, args...)}
}

// Body is what a campaign's key signs.
type Body struct {
	// Format is always Format.
	Format string `json:"format"`
	// Version is the campaign's version, >= 1: a car applies only a
	// version newer than the one it applied last.
	Version uint64 `json:"version"`
	// Vehicles is a glob (path.Match) of the vehicle ids it is for.
	Vehicles string `json:"vehicles"`
	// DBC is the hash of the DBC files the policy was tuned for, as
	// dbc.BusFiles.Hash gives it ("sha256:…").
	DBC string `json:"dbc"`
	// NotBefore is the time before which a car does not apply it.
	NotBefore time.Time `json:"not_before"`
	// Policy is the policy file's text (docs/policy.md).
	Policy string `json:"policy"`
}

// file is a campaign as it travels.
type file struct {
	Campaign string `json:"campaign"` // base64 of the body's bytes
	Key      string `json:"key"`      // KeyID of the signing key
	Sig      string `json:"sig"`      // base64 of the signature
}

// Campaign is a campaign whose signature has been checked (Open).
type Campaign struct {
	Body
	// KeyID is the id of the key that signed it.
	KeyID string
	// Raw is the campaign as it came: what a car keeps on disk.
	Raw []byte
}

// PolicyHash is the SHA-256 of the policy's text, "sha256:" and 64 hex
// digits: what status and the acknowledgements name a policy by.
func (c *Campaign) PolicyHash() string { return PolicyHash([]byte(c.Policy)) }

// PolicyHash returns the hash of a policy file's bytes, as
// Campaign.PolicyHash names it.
func PolicyHash(policy []byte) string {
	h := sha256.Sum256(policy)
	return "sha256:" + hex.EncodeToString(h[:])
}

// KeyID names a public key: the first 8 bytes of its SHA-256, in hex. It
// tells a car's operator which key signed a campaign refused for its
// key; it proves nothing (the signature does).
func KeyID(pub ed25519.PublicKey) string {
	h := sha256.Sum256(pub)
	return hex.EncodeToString(h[:8])
}

// Validate reports a body that no car could apply.
func (b *Body) Validate() error {
	switch {
	case b.Format != Format:
		return fmt.Errorf("format %q, want %q", cut(b.Format), Format)
	case b.Version == 0 || b.Version > MaxVersion:
		return fmt.Errorf("version %d: must be 1 to %d", b.Version, uint64(MaxVersion))
	case b.Vehicles == "":
		return errors.New("no vehicles (a glob of vehicle ids)")
	case strings.ContainsAny(b.Vehicles, "/"):
		return fmt.Errorf("vehicles %q: a vehicle id is one topic level, no '/'", cut(b.Vehicles))
	case b.DBC == "":
		return errors.New("no DBC hash")
	case b.NotBefore.IsZero():
		return errors.New("no not_before time")
	case !utf8.ValidString(b.Policy):
		return errors.New("the policy is not UTF-8 text")
	}
	if _, err := path.Match(b.Vehicles, ""); err != nil {
		return fmt.Errorf("vehicles %q: %v", cut(b.Vehicles), err)
	}
	return nil
}

// Sign makes a signed campaign of b with key.
func Sign(key ed25519.PrivateKey, b Body) ([]byte, error) {
	b.Format = cmp.Or(b.Format, Format)
	b.NotBefore = b.NotBefore.UTC()
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("campaign: %w", err)
	}
	body, err := json.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("campaign: %w", err)
	}
	f := file{
		Campaign: base64.StdEncoding.EncodeToString(body),
		Key:      KeyID(key.Public().(ed25519.PublicKey)),
		Sig:      base64.StdEncoding.EncodeToString(ed25519.Sign(key, signed(body))),
	}
	out, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("campaign: %w", err)
	}
	if len(out) > MaxSize {
		return nil, fmt.Errorf("campaign: %d bytes, over the %d a car takes (the policy is %d bytes)", len(out), MaxSize, len(b.Policy))
	}
	return append(out, '\n'), nil
}

func signed(body []byte) []byte {
	return append([]byte(Context), body...)
}

// Open reads a campaign and checks its signature against pub: a
// payload over MaxSize, one that is no campaign, one signed by another
// key or whose signature does not verify is a *Refusal.
func Open(payload []byte, pub ed25519.PublicKey) (*Campaign, error) {
	if len(payload) > MaxSize {
		return nil, refuse(ReasonSize, "over the %d bytes a car takes", MaxSize)
	}
	var f file
	if err := json.Unmarshal(payload, &f); err != nil {
		return nil, refuse(ReasonFormat, "not a campaign: %v", err)
	}
	if f.Campaign == "" || f.Sig == "" {
		return nil, refuse(ReasonFormat, "not a campaign: no campaign or sig field")
	}
	body, err := base64.StdEncoding.DecodeString(f.Campaign)
	if err != nil {
		return nil, refuse(ReasonFormat, "campaign field: %v", err)
	}
	sig, err := base64.StdEncoding.DecodeString(f.Sig)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return nil, refuse(ReasonFormat, "sig field: not a base64 Ed25519 signature")
	}
	if want := KeyID(pub); f.Key != want {
		return nil, refuse(ReasonKey, "signed by key %q, this car trusts key %s", cut(f.Key), want)
	}
	if !ed25519.Verify(pub, signed(body), sig) {
		return nil, refuse(ReasonSignature, "the signature does not verify with key %s", f.Key)
	}
	c := &Campaign{KeyID: f.Key, Raw: append([]byte(nil), payload...)}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c.Body); err != nil {
		return nil, refuse(ReasonFormat, "signed body: %v", err)
	}
	if err := c.Validate(); err != nil {
		return nil, refuse(ReasonFormat, "signed body: %v", err)
	}
	return c, nil
}

// Car is what a car checks a signed campaign against.
type Car struct {
	// Vehicle is the car's id.
	Vehicle string
	// Applied is the version it applied last (0: none).
	Applied uint64
	// DBC is the hash of its DBC files.
	DBC string
}

// For reports whether the campaign is for vehicle.
func (c *Campaign) For(vehicle string) bool {
	ok, _ := path.Match(c.Vehicles, vehicle)
	return ok
}

// Check checks the campaign's content against car at now: a
// *Refusal when it is for another vehicle, no newer than the applied
// version, tuned for other DBC files, or not valid before a time after
// now (ReasonNotBefore: the car may apply it then).
func (c *Campaign) Check(car Car, now time.Time) error {
	switch {
	case !c.For(car.Vehicle):
		return refuse(ReasonVehicle, "for vehicles %q, this car is %q", cut(c.Vehicles), car.Vehicle)
	case c.Version <= car.Applied:
		return refuse(ReasonVersion, "version %d is not newer than the applied version %d", c.Version, car.Applied)
	case c.DBC != car.DBC:
		return refuse(ReasonDBC, "tuned for DBC %s, this car decodes with %s", cut(c.DBC), car.DBC)
	case now.Before(c.NotBefore):
		return refuse(ReasonNotBefore, "not before %s (the car's clock says %s)",
			c.NotBefore.Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return nil
}

// cut shortens outside text for a message: at most 80 bytes.
func cut(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// Peek reads a campaign's body without checking its signature: what a
// push or a status shows. Only Open says whether a car would take it.
func Peek(payload []byte) (Body, error) {
	var f file
	var b Body
	if len(payload) > MaxSize {
		return b, fmt.Errorf("campaign: %d bytes, over %d", len(payload), MaxSize)
	}
	if err := json.Unmarshal(payload, &f); err != nil {
		return b, fmt.Errorf("campaign: not a campaign: %w", err)
	}
	body, err := base64.StdEncoding.DecodeString(f.Campaign)
	if err != nil {
		return b, fmt.Errorf("campaign: campaign field: %w", err)
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return b, fmt.Errorf("campaign: body: %w", err)
	}
	if err := b.Validate(); err != nil {
		return b, fmt.Errorf("campaign: %w", err)
	}
	return b, nil
}

// ValidVehicle reports whether id can name a vehicle: one whole topic
// level, as the fleet's broker requires of a car's name.
func ValidVehicle(id string) bool {
	return id != "" && !strings.ContainsAny(id, "/+#\x00") && utf8.ValidString(id)
}
