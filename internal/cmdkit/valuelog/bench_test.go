package valuelog

import (
	"io"
	"testing"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/frame"
)

// benchFrame is one frame of three values: exact, scaled (tidied) and
// float32 (shortest form), of signals indexed as a Database indexes
// them.
func benchFrame() (*frame.Frame, []decoder.Value) {
	m := &dbc.Message{Name: "MCU_MotorStatus", ID: 0xA0, Length: 8}
	exact := &dbc.Signal{Name: "MOT_Speed", Message: m, Index: 0, Factor: 1, Unit: "rpm"}
	scaled := &dbc.Signal{Name: "MOT_Torque", Message: m, Index: 1, Factor: 0.1, Unit: "Nm"}
	f32 := &dbc.Signal{Name: "IMU_AccelX", Message: m, Index: 2, Type: dbc.Float32, Factor: 1, Unit: "m/s^2"}
	m.Signals = []*dbc.Signal{exact, scaled, f32}
	vals := []decoder.Value{
		{Signal: exact, Raw: 1200, Int: 1200, Phys: 1200, Flags: decoder.Exact},
		{Signal: scaled, Raw: 7, Phys: 7 * 0.1},
		{Signal: f32, Phys: float64(float32(0.0972878)), Flags: decoder.Float | decoder.OutOfRange},
	}
	return &frame.Frame{Time: 1791563856001301000, ID: 0xA0, Len: 8}, vals
}

func benchWrite(b *testing.B, format Format) {
	f, vals := benchFrame()
	w := NewWriter(io.Discard, format)
	b.ReportAllocs()
	for b.Loop() {
		w.Write(f, "can0", vals)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(vals)), "ns/line")
}

func BenchmarkWriteJSON(b *testing.B) { benchWrite(b, JSON) }
func BenchmarkWriteCSV(b *testing.B)  { benchWrite(b, CSV) }

// benchWriteMessages writes frames of eight messages in turn, as a bus
// carries them, so the text of each message is looked up every frame.
func benchWriteMessages(b *testing.B, format Format) {
	type msgFrame struct {
		f    frame.Frame
		vals []decoder.Value
	}
	var frames []msgFrame
	for i := range 8 {
		m := &dbc.Message{Name: "MSG_" + string(rune('A'+i)), ID: uint32(0x100 + 0x21*i), Length: 8}
		s := &dbc.Signal{Name: "SIG_" + string(rune('A'+i)), Message: m, Factor: 0.1, Unit: "V"}
		m.Signals = []*dbc.Signal{s}
		frames = append(frames, msgFrame{
			frame.Frame{Time: 1791563856001301000 + int64(i)*1000, ID: m.ID, Len: 8},
			[]decoder.Value{{Signal: s, Raw: 7, Phys: 7 * 0.1}},
		})
	}
	w := NewWriter(io.Discard, format)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		mf := &frames[i&7]
		w.Write(&mf.f, "can0", mf.vals)
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/line")
}

func BenchmarkWriteJSONMessages(b *testing.B) { benchWriteMessages(b, JSON) }
func BenchmarkWriteCSVMessages(b *testing.B)  { benchWriteMessages(b, CSV) }
