package wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"
)

// maxPacket is the bench subscriber's limit (mqtt311.MaxPacket).
const maxPacket = 64 << 20

func publishPacket(topic string, payload []byte, qos byte) []byte {
	return AppendPublishV311(nil, topic, qos, 7, payload)
}

func TestReadPacket(t *testing.T) {
	big := bytes.Repeat([]byte{0xab}, 300) // a two-byte remaining length
	var in []byte
	in = append(in, publishPacket("yukart/vehicle/Speed", []byte(`{"value":1}`), 0)...)
	in = append(in, publishPacket("a", big, 1)...)
	in = append(in, Pingresp<<4, 0)
	r := bufio.NewReader(bytes.NewReader(in))
	var buf []byte

	typ, body, err := ReadPacket(r, &buf, maxPacket)
	if err != nil {
		t.Fatal(err)
	}
	topic, payload, err := ParsePublishV311(typ, body)
	if err != nil || string(topic) != "yukart/vehicle/Speed" || string(payload) != `{"value":1}` {
		t.Errorf("first: topic %q, payload %q, %v; want yukart/vehicle/Speed, {\"value\":1}", topic, payload, err)
	}
	typ, body, err = ReadPacket(r, &buf, maxPacket)
	if err != nil {
		t.Fatal(err)
	}
	topic, payload, err = ParsePublishV311(typ, body)
	if err != nil || string(topic) != "a" || !bytes.Equal(payload, big) {
		t.Errorf("second (QoS 1): topic %q, %d payload bytes, %v; want a, 300", topic, len(payload), err)
	}
	if typ, _, err := ReadPacket(r, &buf, maxPacket); err != nil || typ>>4 != Pingresp {
		t.Errorf("third: type %d, %v; want PINGRESP", typ>>4, err)
	}
	if _, _, err := ReadPacket(r, &buf, maxPacket); !errors.Is(err, io.EOF) {
		t.Errorf("at the end: %v, want io.EOF", err)
	}
}

func TestReadPacketErrors(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"length too long", []byte{0x30, 0xff, 0xff, 0xff, 0xff, 0x01}, ErrMalformed},
		{"over the limit", []byte{0x30, 0xff, 0xff, 0xff, 0x7f}, ErrMalformed},
		{"cut in the length", []byte{0x30, 0x80}, io.ErrUnexpectedEOF},
		{"cut in the body", []byte{0x30, 0x05, 0, 1}, io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		var buf []byte
		_, _, err := ReadPacket(bufio.NewReader(bytes.NewReader(tt.in)), &buf, maxPacket)
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: error %v, want %v", tt.name, err, tt.want)
		}
	}
	for _, body := range [][]byte{{0}, {0, 5, 'a'}} {
		if _, _, err := ParsePublishV311(Publish<<4, body); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParsePublishV311(% x) error %v, want ErrMalformed", body, err)
		}
	}
	if _, _, err := ParsePublishV311(Publish<<4|3<<1, []byte{0, 1, 'a', 0, 1}); !errors.Is(err, ErrMalformed) {
		t.Errorf("ParsePublish with QoS 3: %v, want ErrMalformed", err)
	}
}

func TestRemainingLengthEncoding(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 16383, 16384, 2097151, 2097152} {
		p := AppendPacket(nil, Publish<<4, make([]byte, n))
		var buf []byte
		_, body, err := ReadPacket(bufio.NewReader(bytes.NewReader(p)), &buf, maxPacket)
		if err != nil || len(body) != n {
			t.Errorf("length %d: read %d bytes, %v", n, len(body), err)
		}
	}
}

func FuzzReadPacket(f *testing.F) {
	f.Add(publishPacket("t", []byte("x"), 0))
	f.Add(publishPacket("yukart/can/raw", make([]byte, 200), 1))
	f.Add([]byte{0x90, 3, 0, 1, 0x80})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bufio.NewReader(bytes.NewReader(in))
		var buf []byte
		for {
			typ, body, err := ReadPacket(r, &buf, maxPacket)
			if err != nil {
				return
			}
			if typ>>4 == Publish {
				topic, payload, err := ParsePublishV311(typ, body)
				if err == nil && len(topic)+len(payload) > len(body) {
					t.Fatalf("topic %d + payload %d bytes from a body of %d", len(topic), len(payload), len(body))
				}
			}
		}
	})
}

func TestReadAllocs(t *testing.T) {
	p := publishPacket("yukart/vehicle/Speed", []byte(`{"value":1,"ts":1,"seq":1}`), 0)
	src := bytes.NewReader(nil)
	r := bufio.NewReader(src)
	var buf []byte
	n := testing.AllocsPerRun(1000, func() {
		src.Reset(p)
		r.Reset(src)
		typ, body, _ := ReadPacket(r, &buf, maxPacket)
		_, _, _ = ParsePublishV311(typ, body)
	})
	if n != 0 {
		t.Errorf("reading a PUBLISH allocates %v times, want 0", n)
	}
}

// BenchmarkReadPublish reads a PUBLISH of a 120-byte envelope from a
// buffered connection as the bench's subscriber does: "wire" with
// ReadPacket and ParsePublishV311 into one reused buffer, "paho" with
// paho.golang's packets.ReadPacket (which reads MQTT v5 only: it is
// given the same message as a v5 PUBLISH). On a shared two-core
// machine (Intel Xeon, amd64), one run of
//
//	go test -run '^$' -bench ReadPublish -benchmem -count 5 ./mqttclient/wire/
//
// gave medians of 40 ns and 0 allocations a packet for wire, 2,841 ns
// and 22 allocations (4,603 bytes) for paho: about 70 times the CPU, on
// each of the eight subscribers that run beside the broker a bench
// measures. So the subscriber keeps its own reader.
func BenchmarkReadPublish(b *testing.B) {
	payload := bytes.Repeat([]byte{'x'}, 120)
	const topic = "yukart/vehicle/Speed"
	for _, bc := range []struct {
		name string
		pkt  []byte
		read func(r *bufio.Reader, buf *[]byte) error
	}{
		{"wire", AppendPublishV311(nil, topic, 0, 0, payload), func(r *bufio.Reader, buf *[]byte) error {
			typ, body, err := ReadPacket(r, buf, maxPacket)
			if err != nil {
				return err
			}
			_, _, err = ParsePublishV311(typ, body)
			return err
		}},
		{"paho", AppendPublishV5(nil, topic, payload, false, ""), func(r *bufio.Reader, _ *[]byte) error {
			cp, err := packets.ReadPacket(r)
			if err != nil {
				return err
			}
			if _, ok := cp.Content.(*packets.Publish); !ok {
				return errors.New("not a PUBLISH")
			}
			return nil
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			stream := bytes.Repeat(bc.pkt, 256)
			src := bytes.NewReader(stream)
			r := bufio.NewReaderSize(src, 64<<10)
			var buf []byte
			b.SetBytes(int64(len(bc.pkt)))
			b.ReportAllocs()
			for i := range b.N {
				if i%256 == 0 {
					src.Reset(stream)
					r.Reset(src)
				}
				if err := bc.read(r, &buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestAppendV311: CONNECT and SUBSCRIBE are the bytes MQTT 3.1.1 gives
// (3.1 and 3.8), appended after what the buffer held.
func TestAppendV311(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  []byte
		want []byte
	}{
		{"connect", AppendConnectV311([]byte("k"), "c", "", "", 30*time.Second),
			[]byte{'k', 0x10, 13, 0, 4, 'M', 'Q', 'T', 'T', 4, 0x02, 0, 30, 0, 1, 'c'}},
		{"connect with user", AppendConnectV311(nil, "c", "u", "", 60*time.Second),
			[]byte{0x10, 16, 0, 4, 'M', 'Q', 'T', 'T', 4, 0x82, 0, 60, 0, 1, 'c', 0, 1, 'u'}},
		{"connect with user and password", AppendConnectV311(nil, "c", "u", "p", 60*time.Second),
			[]byte{0x10, 19, 0, 4, 'M', 'Q', 'T', 'T', 4, 0xc2, 0, 60, 0, 1, 'c', 0, 1, 'u', 0, 1, 'p'}},
		{"password without user", AppendConnectV311(nil, "c", "", "p", 60*time.Second),
			[]byte{0x10, 13, 0, 4, 'M', 'Q', 'T', 'T', 4, 0x02, 0, 60, 0, 1, 'c'}},
		{"subscribe", AppendSubscribeV311(nil, 0x0102, "a/#", "b"),
			[]byte{0x82, 12, 1, 2, 0, 3, 'a', '/', '#', 0, 0, 1, 'b', 0}},
		{"publish QoS 1", AppendPublishV311(nil, "t", 1, 9, []byte("x")),
			[]byte{0x32, 6, 0, 1, 't', 0, 9, 'x'}},
	} {
		if !bytes.Equal(tc.got, tc.want) {
			t.Errorf("%s: got % x, want % x", tc.name, tc.got, tc.want)
		}
	}
}
