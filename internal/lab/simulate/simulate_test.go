package simulate

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/frame"
)

var update = flag.Bool("update", false, "rewrite the generated files under ../testdata")

const testdata = "../../../testdata"

func loadDB(t testing.TB, name string) *dbc.Database {
	t.Helper()
	db, err := dbc.Load(filepath.Join(testdata, name))
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// generate returns copies of the frames of a capture.
func generate(t testing.TB, db *dbc.Database, opts Options) []frame.Frame {
	t.Helper()
	var frames []frame.Frame
	if err := Generate(db, opts, func(f *frame.Frame) error {
		frames = append(frames, *f)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return frames
}

func writeLog(t testing.TB, db *dbc.Database, opts Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := WriteLog(context.Background(), &buf, db, opts)
	if err != nil {
		t.Fatal(err)
	}
	if lines := bytes.Count(buf.Bytes(), []byte("\n")); n != lines {
		t.Fatalf("WriteLog: got %d frames reported, %d lines written", n, lines)
	}
	return buf.Bytes()
}

// decoded holds every decoded value of a capture by signal name, in
// frame order, with the frame's time.
type decoded map[string][]sample

type sample struct {
	t     int64
	phys  float64
	flags decoder.Flags
}

func decodeAll(t testing.TB, db *dbc.Database, frames []frame.Frame) decoded {
	t.Helper()
	d := decoder.New(db)
	buf := make([]decoder.Value, 0, d.MaxSignals())
	out := decoded{}
	for i := range frames {
		m, vals := d.Decode(&frames[i], buf)
		if m == nil {
			t.Fatalf("frame %d (ID %X) not in the database", i, frames[i].ID)
		}
		for _, v := range vals {
			out[v.Signal.Name] = append(out[v.Signal.Name], sample{frames[i].Time, v.Phys, v.Flags})
		}
	}
	return out
}

// TestIdleLogUpToDate pins the checked-in capture to the generator: the
// default options regenerate testdata/idle.log byte for byte. Run with
// -update after changing the generator or yukart.dbc on purpose.
func TestIdleLogUpToDate(t *testing.T) {
	db := loadDB(t, "yukart.dbc")
	got := writeLog(t, db, DefaultOptions())
	path := filepath.Join(testdata, "idle.log")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("idle.log line %d: got %q, want %q (regenerate with go test ./simulate -run TestIdleLogUpToDate -update)", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("idle.log: got %d lines, want %d (regenerate with -update)", len(gl), len(wl))
	}
}

// TestIdleLogReadsBack checks that the checked-in capture parses and
// holds the frames the generator makes.
func TestIdleLogReadsBack(t *testing.T) {
	db := loadDB(t, "yukart.dbc")
	want := generate(t, db, DefaultOptions())
	r, err := capture.Open(filepath.Join(testdata, "idle.log"), capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got frame.Frame
	n := 0
	for ; ; n++ {
		err := r.Next(&got)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		if n >= len(want) {
			t.Fatalf("idle.log has more than %d frames", len(want))
		}
		w := want[n]
		w.Bus = got.Bus // the reader assigns bus indexes from names
		if got != w {
			t.Fatalf("frame %d: got %+v, want %+v", n, got, w)
		}
	}
	if n != len(want) {
		t.Fatalf("idle.log: got %d frames, want %d", n, len(want))
	}
	if n < 17000 || n > 18500 {
		t.Errorf("idle.log: %d frames, want about 17,800 (20 s at 891 frames/s)", n)
	}
}

func TestFrameCountsFollowCycleTimes(t *testing.T) {
	db := loadDB(t, "yukart.dbc")
	for _, opts := range []Options{
		{Seed: 1},
		{Seed: 7, Scenario: Drive, Duration: 30 * time.Second},
		{Seed: 3, Duration: 1234 * time.Millisecond},
	} {
		opts = opts.withDefaults()
		counts := map[dbc.Key]int{}
		for _, f := range generate(t, db, opts) {
			counts[dbc.Key{ID: f.ID, Extended: f.Extended()}]++
		}
		total := 0.0
		for _, m := range db.Messages {
			want := float64(opts.Duration) / float64(m.CycleTime)
			total += want
			got := counts[dbc.Key{ID: m.ID, Extended: m.Extended}]
			if math.Abs(float64(got)-want) > 1 {
				t.Errorf("%s %s: %s: got %d frames, want %.1f ± 1", opts.Scenario, opts.Duration, m.Name, got, want)
			}
		}
		if rate := total / opts.Duration.Seconds(); math.Abs(rate-891.3) > 0.1 {
			t.Errorf("yukart.dbc: %.1f frames/s, want 891.3", rate)
		}
	}
}

// TestBusTiming checks the arbitration model: timestamps strictly
// increase, frames never overlap on the bus, each message keeps its
// cycle within the jitter and the bus's queueing delay.
func TestBusTiming(t *testing.T) {
	db := loadDB(t, "yukart.dbc")
	opts := Options{Seed: 1, Scenario: Drive, Duration: 10 * time.Second}.withDefaults()
	frames := generate(t, db, opts)
	start := opts.Start.UnixNano()
	minBits := int64(44 + 3) // the shortest frame: standard, no data
	bitNs := int64(time.Second) / DefaultBitrate
	last := map[uint32]int64{}
	for i, f := range frames {
		if f.Time%1000 != 0 {
			t.Fatalf("frame %d: time %d is not a whole microsecond", i, f.Time)
		}
		if f.Time < start || f.Time > start+int64(opts.Duration)+int64(5*time.Millisecond) {
			t.Fatalf("frame %d: time %d outside the capture", i, f.Time)
		}
		if i > 0 {
			gap := f.Time - frames[i-1].Time
			if gap < minBits*bitNs-1000 {
				t.Fatalf("frame %d: %d ns after the previous one, want at least one frame's time on the bus (%d ns)", i, gap, minBits*bitNs)
			}
		}
		if prev, ok := last[f.ID]; ok {
			m := db.Message(f.ID, f.Extended())
			got := time.Duration(f.Time - prev)
			if d := got - m.CycleTime; d < -3*time.Millisecond || d > 3*time.Millisecond {
				t.Errorf("%s: %s between frames, want %s ± 3ms", m.Name, got, m.CycleTime)
			}
		}
		last[f.ID] = f.Time
	}
}

func TestDeterministic(t *testing.T) {
	db := loadDB(t, "yukart.dbc")
	opts := Options{Seed: 42, Scenario: Drive, Duration: 5 * time.Second}
	a, b := writeLog(t, db, opts), writeLog(t, db, opts)
	if !bytes.Equal(a, b) {
		t.Fatal("same seed: the captures differ")
	}
	opts.Seed = 43
	c := writeLog(t, db, opts)
	if bytes.Equal(a, c) {
		t.Fatal("seeds 42 and 43: the captures are the same")
	}
	// The phases differ, so each message may send one frame more or less.
	na, nc := bytes.Count(a, []byte("\n")), bytes.Count(c, []byte("\n"))
	if d := na - nc; d < -len(db.Messages) || d > len(db.Messages) {
		t.Errorf("seeds 42 and 43: got %d and %d frames, want within one a message", na, nc)
	}
}

// TestIdleDecodesInRange decodes every frame of the idle capture: every
// frame is a known message, every signal fits, none out of its DBC range,
// and every multiplexed signal shows up.
func TestIdleDecodesInRange(t *testing.T) {
	for _, sc := range Scenarios {
		t.Run(string(sc), func(t *testing.T) {
			db := loadDB(t, "yukart.dbc")
			frames := generate(t, db, Options{Seed: 1, Scenario: sc, Duration: 60 * time.Second})
			vals := decodeAll(t, db, frames)
			for name, ss := range vals {
				for _, s := range ss {
					if s.flags&(decoder.OutOfRange|decoder.Truncated) != 0 {
						t.Errorf("%s = %g at %d: flags %b", name, s.phys, s.t, s.flags)
						break
					}
				}
			}
			for _, s := range db.Signals {
				if len(vals[s.Name]) == 0 {
					t.Errorf("%s never decoded", s.FullName())
				}
			}
		})
	}
}

// stats summarises one signal's samples.
type stats struct {
	n, changes, zeros int
	min, max, mean    float64
}

func summarise(ss []sample) stats {
	st := stats{n: len(ss), min: math.Inf(1), max: math.Inf(-1)}
	for i, s := range ss {
		st.min, st.max = math.Min(st.min, s.phys), math.Max(st.max, s.phys)
		st.mean += s.phys
		if s.phys == 0 {
			st.zeros++
		}
		if i > 0 && s.phys != ss[i-1].phys {
			st.changes++
		}
	}
	st.mean /= float64(len(ss))
	return st
}

// TestIdleLooksParked checks what someone looking at the idle capture
// would expect of a kart parked with its motor idling.
func TestIdleLooksParked(t *testing.T) {
	db := loadDB(t, "yukart.dbc")
	vals := decodeAll(t, db, generate(t, db, DefaultOptions()))
	tests := []struct {
		signal   string
		min, max float64 // range of the samples
		mean     [2]float64
		// changes bounds how often consecutive samples differ, as a
		// fraction of the samples: [lo, hi].
		changes [2]float64
	}{
		// Wheels stand still: zero, but for a quantum now and then.
		{"WSS_SpeedFL", 0, 0.01, [2]float64{0, 0.003}, [2]float64{0.01, 0.3}},
		{"WSS_SpeedRR", 0, 0.01, [2]float64{0, 0.003}, [2]float64{0.01, 0.3}},
		{"VCU_VehicleSpeed", 0, 0, [2]float64{0, 0}, [2]float64{0, 0}},
		// The motor idles, noisily.
		{"MOT_Speed", 235, 265, [2]float64{248, 252}, [2]float64{0.5, 1}},
		{"MOT_Torque", 0, 2, [2]float64{0.7, 0.9}, [2]float64{0.3, 1}},
		// The pack sits still: voltage noise, SOC constant.
		{"BMS_PackVoltage", 95, 98, [2]float64{96, 97.5}, [2]float64{0.3, 1}},
		{"BMS_SOC", 78, 78, [2]float64{78, 78}, [2]float64{0, 0}},
		// Temperatures drift: mostly the same reading frame after frame.
		{"MOT_TempStator", 30, 45, [2]float64{30, 45}, [2]float64{0, 0.05}},
		{"COOL_TempInlet", 25, 32, [2]float64{25, 32}, [2]float64{0, 0.1}},
		{"BMS_TempAvg", 20, 30, [2]float64{20, 30}, [2]float64{0, 0.1}},
		{"INV_TempIgbt", 30, 40, [2]float64{30, 40}, [2]float64{0, 0.2}},
		// States stay put.
		{"VCU_Gear", 2, 2, [2]float64{2, 2}, [2]float64{0, 0}},
		{"VCU_VehicleState", 3, 3, [2]float64{3, 3}, [2]float64{0, 0}},
		{"INV_State", 4, 4, [2]float64{4, 4}, [2]float64{0, 0}},
		{"PDL_BrakeSwitch", 0, 0, [2]float64{0, 0}, [2]float64{0, 0}},
	}
	for _, tt := range tests {
		st := summarise(vals[tt.signal])
		frac := float64(st.changes) / float64(st.n)
		if st.n == 0 || st.min < tt.min || st.max > tt.max || st.mean < tt.mean[0] || st.mean > tt.mean[1] || frac < tt.changes[0] || frac > tt.changes[1] {
			t.Errorf("%s: got %d samples in [%g, %g], mean %g, %.3f changing; want [%g, %g], mean in %v, changing in %v",
				tt.signal, st.n, st.min, st.max, st.mean, frac, tt.min, tt.max, tt.mean, tt.changes)
		}
	}
}

func TestDriveMoves(t *testing.T) {
	db := loadDB(t, "yukart.dbc")
	vals := decodeAll(t, db, generate(t, db, Options{Seed: 1, Scenario: Drive, Duration: 120 * time.Second}))
	speed := summarise(vals["VCU_VehicleSpeed"])
	if speed.max < 60 || speed.mean < 25 {
		t.Errorf("VCU_VehicleSpeed: got max %g, mean %g km/h; want max ≥ 60, mean ≥ 25", speed.max, speed.mean)
	}
	if steer := summarise(vals["SAS_Angle"]); steer.min > -30 || steer.max < 30 {
		t.Errorf("SAS_Angle: got [%g, %g]; want corners both ways (beyond ±30°)", steer.min, steer.max)
	}
	gear := vals["VCU_Gear"]
	if g0, g1 := gear[0].phys, gear[len(gear)-1].phys; g0 != gearN || g1 != gearD || summarise(gear).changes != 1 {
		t.Errorf("VCU_Gear: got %g → %g in %d changes; want N → D once", g0, g1, summarise(gear).changes)
	}
	if mode := vals["VCU_DriveMode"]; mode[len(mode)-1].phys != modeSport || summarise(mode).changes != 1 {
		t.Errorf("VCU_DriveMode: got %g at the end after %d changes; want Sport after one change", mode[len(mode)-1].phys, summarise(mode).changes)
	}
	soc := vals["BMS_SOC"]
	if soc[len(soc)-1].phys >= soc[0].phys {
		t.Errorf("BMS_SOC: got %g → %g; want it to fall", soc[0].phys, soc[len(soc)-1].phys)
	}
	stator := vals["MOT_TempStator"]
	if stator[len(stator)-1].phys <= stator[0].phys {
		t.Errorf("MOT_TempStator: got %g → %g °C; want it to rise", stator[0].phys, stator[len(stator)-1].phys)
	}
	if regen := summarise(vals["VCU_RegenActive"]); regen.max != 1 {
		t.Error("VCU_RegenActive never set: want regeneration when braking")
	}
}

// TestCountersAndChecksums checks every frame of the messages with a
// rolling counter and a CRC.
func TestCountersAndChecksums(t *testing.T) {
	db := loadDB(t, "yukart.dbc")
	frames := generate(t, db, Options{Seed: 5, Scenario: Drive, Duration: 5 * time.Second})
	counter := map[uint32]int{}
	seen := map[uint32]int{}
	for _, f := range frames {
		switch f.ID {
		case 0x0A0, 0x0C0: // MCU_MotorStatus, VCU_TorqueRequest
			if got, want := f.Data[7], crc8J1850(f.Data[:7]); got != want {
				t.Fatalf("%03X#%X: checksum %02X, want %02X", f.ID, f.Data[:8], got, want)
			}
			c := int(f.Data[6] & 0x0F) // VCU_TorqueCounter
			if f.ID == 0x0A0 {
				c = int(f.Data[6] >> 4) // MOT_StatusCounter
			}
			if prev, ok := counter[f.ID]; ok && c != (prev+1)%16 {
				t.Fatalf("%03X: counter %d after %d, want %d", f.ID, c, prev, (prev+1)%16)
			}
			counter[f.ID] = c
			seen[f.ID]++
		}
	}
	if seen[0x0A0] < 400 || seen[0x0C0] < 400 {
		t.Fatalf("got %d and %d frames of 0A0 and 0C0, want 500 each", seen[0x0A0], seen[0x0C0])
	}
}

// crc8J1850 is an independent bitwise CRC-8 SAE J1850.
func crc8J1850(b []byte) byte {
	crc := 0xFF
	for _, x := range b {
		for i := 7; i >= 0; i-- {
			bit := (crc>>7)&1 ^ int(x>>i)&1
			crc = crc << 1 & 0xFF
			if bit == 1 {
				crc ^= 0x1D
			}
		}
	}
	return byte(crc ^ 0xFF)
}

func TestCRC8Vector(t *testing.T) {
	// The AUTOSAR specification's check value of CRC-8 SAE J1850 for
	// "123456789" is 0x4B.
	if got := crc8J1850([]byte("123456789")); got != 0x4B {
		t.Fatalf("crc8J1850(\"123456789\") = %02X, want 4B", got)
	}
	sig := &dbc.Signal{Name: "C", Start: 56, Length: 8, Factor: 1}
	data := []byte{0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0}
	if err := encodeChecksum(sig, data); err != nil {
		t.Fatal(err)
	}
	if want := crc8J1850(data[:7]); data[7] != want {
		t.Fatalf("encodeChecksum: got %02X, want %02X", data[7], want)
	}
}

// TestMultiplexCycles checks that multiplexed messages go through their
// configurations in turn: the cell groups 0–7, and the diagnostics
// message's groups and nested pages.
func TestMultiplexCycles(t *testing.T) {
	db := loadDB(t, "yukart.dbc")
	frames := generate(t, db, DefaultOptions())
	var groups []int
	diag := map[string]int{}
	for _, f := range frames {
		switch f.ID {
		case 0x200:
			groups = append(groups, int(f.Data[0]))
		case 0x6A0:
			g, p := f.Data[0]&0x0F, f.Data[0]>>4
			if g != 1 {
				p = 0
			}
			diag[fmt.Sprintf("group %d page %d", g, p)]++
		}
	}
	for i := 1; i < len(groups); i++ {
		if groups[i] != (groups[i-1]+1)%8 {
			t.Fatalf("BMS_CellGroup: %d after %d, want %d", groups[i], groups[i-1], (groups[i-1]+1)%8)
		}
	}
	want := []string{"group 0 page 0", "group 1 page 0", "group 1 page 1", "group 2 page 0"}
	if len(diag) != len(want) {
		t.Fatalf("VCU_Diagnostics: got configurations %v, want %v", diag, want)
	}
	for _, k := range want {
		if diag[k] != 50 {
			t.Errorf("VCU_Diagnostics %s: got %d frames, want 50", k, diag[k])
		}
	}
}

// TestOtherDatabases runs the generator on DBCs it has no table for:
// every cyclic message is sent, values decode inside their ranges and
// move.
func TestOtherDatabases(t *testing.T) {
	for _, name := range []string{"mix3.dbc", "mix8.dbc"} {
		t.Run(name, func(t *testing.T) {
			db := loadDB(t, name)
			frames := generate(t, db, Options{Seed: 1, Duration: 2 * time.Second})
			if len(frames) < 1700 || len(frames) > 1870 {
				t.Errorf("got %d frames, want about 1,783", len(frames))
			}
			vals := decodeAll(t, db, frames)
			moving := 0
			for _, s := range db.Signals {
				ss := vals[s.Name]
				st := summarise(ss)
				if st.n == 0 || st.min < s.Min || st.max > s.Max {
					t.Errorf("%s: got %d samples in [%g, %g], want some in [%g, %g]", s.Name, st.n, st.min, st.max, s.Min, s.Max)
				}
				if st.changes > 0 {
					moving++
				}
			}
			if moving < len(db.Signals)*3/4 {
				t.Errorf("%d of %d signals change, want most", moving, len(db.Signals))
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want error
	}{
		{"defaults", Options{}, nil},
		{"drive", Options{Scenario: Drive, Duration: time.Minute}, nil},
		{"unknown scenario", Options{Scenario: "race"}, ErrOptions},
		{"negative duration", Options{Duration: -time.Second}, ErrOptions},
		{"blank interface", Options{Interface: "can 0"}, ErrOptions},
		{"bitrate", Options{Bitrate: 5_000_000}, ErrOptions},
		{"jitter", Options{Jitter: time.Second}, ErrOptions},
	}
	for _, tt := range tests {
		if got := tt.opts.Validate(); !errors.Is(got, tt.want) {
			t.Errorf("%s: Validate() = %v, want %v", tt.name, got, tt.want)
		}
	}
	db := loadDB(t, "yukart.dbc")
	if err := Generate(db, Options{Scenario: "race"}, func(*frame.Frame) error { return nil }); !errors.Is(err, ErrOptions) {
		t.Errorf("Generate with scenario race: got %v, want ErrOptions", err)
	}
}

func TestGenerateErrors(t *testing.T) {
	db := loadDB(t, "yukart.dbc")
	stop := errors.New("stop")
	n := 0
	err := Generate(db, Options{}, func(*frame.Frame) error {
		if n++; n == 10 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 10 {
		t.Errorf("emit error at frame 10: got %v after %d frames, want stop after 10", err, n)
	}
	empty, err := dbc.NewDatabase([]*dbc.Message{{Name: "Event", ID: 1, Length: 8}})
	if err != nil {
		t.Fatal(err)
	}
	if err := Generate(empty, Options{}, func(*frame.Frame) error { return nil }); !errors.Is(err, ErrNoCyclic) {
		t.Errorf("no cyclic messages: got %v, want ErrNoCyclic", err)
	}
	if err := Generate(nil, Options{}, func(*frame.Frame) error { return nil }); !errors.Is(err, ErrNoCyclic) {
		t.Errorf("nil database: got %v, want ErrNoCyclic", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if n, err := WriteLog(ctx, io.Discard, db, Options{}); !errors.Is(err, context.Canceled) || n != 0 {
		t.Errorf("WriteLog with a cancelled context: got %d frames, %v; want 0, context.Canceled", n, err)
	}
	if got := generate(t, db, Options{Duration: time.Nanosecond}); len(got) > len(db.Messages) {
		t.Errorf("1 ns capture: got %d frames, want at most one a message", len(got))
	}
}

func BenchmarkGenerate(b *testing.B) {
	db := loadDB(b, "yukart.dbc")
	opts := Options{Seed: 1, Scenario: Drive, Duration: 10 * time.Second}
	frames := 0
	b.ReportAllocs()
	for b.Loop() {
		if err := Generate(db, opts, func(*frame.Frame) error { frames++; return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(frames)/b.Elapsed().Seconds(), "frames/s")
}
