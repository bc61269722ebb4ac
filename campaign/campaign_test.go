package campaign

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)

func testKey(t testing.TB) (ed25519.PrivateKey, ed25519.PublicKey) {
	t.Helper()
	priv, pub, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	k, err := ParsePrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParsePublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Equal(k.Public()) {
		t.Fatal("the public key file is not the private key's")
	}
	return k, p
}

func body(version uint64) Body {
	return Body{Version: version, Vehicles: "kart0[1-3]", DBC: "sha256:aa", NotBefore: t0, Policy: "defaults:\n  max_rate: 10\n"}
}

func TestOpenAndCheck(t *testing.T) {
	key, pub := testKey(t)
	other, _ := testKey(t)
	good, err := Sign(key, body(5))
	if err != nil {
		t.Fatal(err)
	}
	byOther, err := Sign(other, body(7))
	if err != nil {
		t.Fatal(err)
	}
	// A signature of the right key over another body, and the other
	// key's signature under the right key's id.
	var f, fo file
	_ = json.Unmarshal(good, &f)
	_ = json.Unmarshal(byOther, &fo)
	swapped := f
	swapped.Campaign = fo.Campaign
	forgedID := fo
	forgedID.Key = f.Key
	enc := func(v file) []byte { b, _ := json.Marshal(v); return b }
	// A body tampered with after signing: version 5 -> 9.
	raw, _ := base64.StdEncoding.DecodeString(f.Campaign)
	tampered := f
	tampered.Campaign = base64.StdEncoding.EncodeToString([]byte(strings.Replace(string(raw), `"version":5`, `"version":9`, 1)))
	car := Car{Vehicle: "kart02", Applied: 4, DBC: "sha256:aa"}
	tests := []struct {
		name    string
		payload []byte
		car     Car
		now     time.Time
		want    Reason // "" for applied
	}{
		{"good", good, car, t0, ""},
		{"oversized", append(good, make([]byte, MaxSize)...), car, t0, ReasonSize},
		{"not json", []byte("hello"), car, t0, ReasonFormat},
		{"an envelope", []byte(`{"value":1,"ts":1,"seq":1}`), car, t0, ReasonFormat},
		{"empty", nil, car, t0, ReasonFormat},
		{"bad base64", []byte(`{"campaign":"!!","key":"x","sig":"AAAA"}`), car, t0, ReasonFormat},
		{"another key", byOther, car, t0, ReasonKey},
		{"another key under this key's id", enc(forgedID), car, t0, ReasonSignature},
		{"another body", enc(swapped), car, t0, ReasonSignature},
		{"tampered", enc(tampered), car, t0, ReasonSignature},
		{"another vehicle", good, Car{Vehicle: "kart04", Applied: 4, DBC: "sha256:aa"}, t0, ReasonVehicle},
		{"equal version", good, Car{Vehicle: "kart02", Applied: 5, DBC: "sha256:aa"}, t0, ReasonVersion},
		{"older version", good, Car{Vehicle: "kart02", Applied: 6, DBC: "sha256:aa"}, t0, ReasonVersion},
		{"other dbc", good, Car{Vehicle: "kart02", Applied: 4, DBC: "sha256:bb"}, t0, ReasonDBC},
		{"too early", good, car, t0.Add(-time.Second), ReasonNotBefore},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Open(tc.payload, pub)
			if err == nil {
				err = c.Check(tc.car, tc.now)
			}
			var r *Refusal
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("got %v, want it applied", err)
			case tc.want == "":
				if c.Version != 5 || c.PolicyHash() != PolicyHash([]byte(body(5).Policy)) {
					t.Fatalf("got version %d hash %s", c.Version, c.PolicyHash())
				}
			case !errors.As(err, &r):
				t.Fatalf("got %v, want a refusal for %s", err, tc.want)
			case r.Reason != tc.want:
				t.Fatalf("got %v, want reason %s", err, tc.want)
			case !errors.Is(err, ErrRefused):
				t.Fatalf("%v is no ErrRefused", err)
			}
		})
	}
}

func TestSignRefuses(t *testing.T) {
	key, _ := testKey(t)
	for name, mod := range map[string]func(*Body){
		"version 0":     func(b *Body) { b.Version = 0 },
		"no vehicles":   func(b *Body) { b.Vehicles = "" },
		"slash":         func(b *Body) { b.Vehicles = "kart/01" },
		"bad glob":      func(b *Body) { b.Vehicles = "kart[" },
		"no dbc":        func(b *Body) { b.DBC = "" },
		"no not_before": func(b *Body) { b.NotBefore = time.Time{} },
		"not utf-8":     func(b *Body) { b.Policy = "\xff" },
		"too large":     func(b *Body) { b.Policy = strings.Repeat("#", MaxSize) },
	} {
		b := body(1)
		mod(&b)
		if _, err := Sign(key, b); err == nil {
			t.Errorf("%s: signed", name)
		}
	}
}

func TestTopic(t *testing.T) {
	if got := Topic("fleet/+/yukart/policy", "kart01"); got != "fleet/kart01/yukart/policy" {
		t.Errorf("got %s", got)
	}
	for topic, want := range map[string]string{
		"fleet/kart01/yukart/policy": "kart01",
		"fleet/kart01/yukart/window": "",
		"fleet//yukart/policy":       "",
		"fleet/a/b/yukart/policy":    "",
	} {
		got, ok := VehicleOf("fleet/+/yukart/policy", topic)
		if got != want || ok != (want != "") {
			t.Errorf("VehicleOf(%q) = %q, %v; want %q", topic, got, ok, want)
		}
	}
}

func TestKeyFilesRefused(t *testing.T) {
	priv, pub, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParsePublicKey(priv); err == nil {
		t.Error("a private key read as a public key")
	}
	if _, err := ParsePrivateKey(pub); err == nil {
		t.Error("a public key read as a private key")
	}
	if _, err := ParsePublicKey([]byte("garbage")); err == nil {
		t.Error("garbage read as a key")
	}
}

// FuzzOpen: no payload makes Open panic, and whatever it takes verified.
func FuzzOpen(f *testing.F) {
	key, pub := testKey(f)
	good, _ := Sign(key, body(1))
	f.Add(good)
	f.Add([]byte(`{"campaign":"e30=","key":"","sig":""}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		c, err := Open(payload, pub)
		if err == nil && c.Validate() != nil {
			t.Fatalf("took an invalid body: %+v", c.Body)
		}
		var r *Refusal
		if err != nil && !errors.As(err, &r) {
			t.Fatalf("error %v is no *Refusal", err)
		}
	})
}
