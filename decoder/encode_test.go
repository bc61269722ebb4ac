package decoder

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/yukart/candec/dbc"
)

func TestEncodePhys(t *testing.T) {
	f32 := intel("f", 0, 32, false, 2, 1)
	f32.Type = dbc.Float32
	tests := []struct {
		name    string
		sig     *dbc.Signal
		phys    float64
		raw     uint64
		data    []byte // the first bytes of data afterwards
		wantErr error
	}{
		{"unsigned in range", intel("u", 0, 8, false, 1, 0), 200, 200, []byte{200, 0}, nil},
		{"unsigned above saturates", intel("u", 0, 8, false, 1, 0), 300, 255, []byte{255, 0}, ErrRawRange},
		{"unsigned below saturates", intel("u", 0, 8, false, 1, 0), -5, 0, []byte{0, 0}, ErrRawRange},
		{"signed scaled", motorola("s", 7, 12, true, 0.5, 0), 1023.5, 2047, []byte{0x7F, 0xF0}, nil},
		{"signed above saturates", motorola("s", 7, 12, true, 0.5, 0), 1024, 2047, []byte{0x7F, 0xF0}, ErrRawRange},
		{"signed below saturates", motorola("s", 7, 12, true, 0.5, 0), -2000, 1<<64 - 2048, []byte{0x80, 0x00}, ErrRawRange},
		{"half rounds away from zero", intel("s", 0, 8, true, 0.5, 0), 1.25, 3, []byte{3, 0}, nil},
		{"negative half rounds away from zero", intel("s", 0, 8, true, 0.5, 0), -1.25, 1<<64 - 3, []byte{0xFD, 0}, nil},
		{"offset", intel("t", 4, 8, false, 1, -40), 25, 65, []byte{0x10, 0x04}, nil},
		{"NaN writes nothing", intel("u", 0, 8, false, 1, 0), math.NaN(), 0, []byte{0, 0}, ErrRawRange},
		{"float32", f32, 3.5, 0x3FA00000, []byte{0x00, 0x00}, nil},
		{"unsigned 64 bits", intel("u", 0, 64, false, 1, 0), 1e19, 10000000000000000000, []byte{0x00, 0x00}, nil},
		{"unsigned 64 bits saturates", intel("u", 0, 64, false, 1, 0), 0x1p64, math.MaxUint64, []byte{0xFF, 0xFF}, ErrRawRange},
		{"signed 64 bits saturates", intel("s", 0, 64, true, 1, 0), -1e19, 1 << 63, []byte{0x00, 0x00}, ErrRawRange},
		{"factor 0 at the offset", intel("z", 0, 8, false, 0, 7), 7, 0, []byte{0, 0}, nil},
		{"factor 0 elsewhere", intel("z", 0, 8, false, 0, 7), 8, 0, []byte{0, 0}, ErrRawRange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var data [8]byte
			raw, err := EncodePhys(tt.sig, data[:], tt.phys)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("got error %v, want %v", err, tt.wantErr)
			}
			if raw != tt.raw {
				t.Errorf("got raw %#x, want %#x", raw, tt.raw)
			}
			if !bytes.Equal(data[:len(tt.data)], tt.data) {
				t.Errorf("got data % X, want % X", data[:len(tt.data)], tt.data)
			}
		})
	}
}

func TestEncodeRawKeepsOtherBits(t *testing.T) {
	data := bytes.Repeat([]byte{0xFF}, 4)
	// Motorola 13 bits from byte 0 bit 3: low nibble of 0, all of 1, bit 7 of 2.
	if err := EncodeRaw(motorola("m", 3, 13, false, 1, 0), data, 0); err != nil {
		t.Fatal(err)
	}
	if want := []byte{0xF0, 0x00, 0x7F, 0xFF}; !bytes.Equal(data, want) {
		t.Errorf("got % X, want % X", data, want)
	}
	// Only the low Length bits of raw are written.
	if err := EncodeRaw(intel("i", 20, 8, false, 1, 0), data, 0xFFFFFF00); err != nil {
		t.Fatal(err)
	}
	if want := []byte{0xF0, 0x00, 0x0F, 0xF0}; !bytes.Equal(data, want) {
		t.Errorf("got % X, want % X", data, want)
	}
}

func TestEncodeShortData(t *testing.T) {
	s := motorola("m", 23, 16, false, 1, 0) // bytes 2-3
	if err := EncodeRaw(s, make([]byte, 3), 1); !errors.Is(err, ErrShortData) {
		t.Errorf("EncodeRaw: got %v, want ErrShortData", err)
	}
	if _, err := EncodePhys(s, make([]byte, 3), 1); !errors.Is(err, ErrShortData) {
		t.Errorf("EncodePhys: got %v, want ErrShortData", err)
	}
	if _, err := EncodePhys(intel("bad", 0, 65, false, 1, 0), make([]byte, 9), 1); !errors.Is(err, ErrLayout) {
		t.Errorf("EncodePhys: got %v, want ErrLayout", err)
	}
}
