package procstat

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Stat
	}{
		{
			name: "plain",
			line: "1234 (mosquitto) S 1 1234 1234 0 -1 4194560 312 0 0 0 157 42 0 0 20 0 1 0 5512 7577600 1800 18446744073709551615 1 1 0 0 0 0 0 4096 16387 0 0 0 17 1 0 0 0 0 0\n",
			want: Stat{PID: 1234, Comm: "mosquitto", State: 'S', UTime: 157, STime: 42},
		},
		{
			name: "comm with spaces and parentheses",
			line: "77 (my (odd) proc) x) R 1 77 77 0 -1 4194304 10 0 0 0 9001 1 0 0 20 0 3 0 100 0 0 0",
			want: Stat{PID: 77, Comm: "my (odd) proc) x", State: 'R', UTime: 9001, STime: 1},
		},
		{
			name: "zombie, no trailing newline",
			line: "5 (candec) Z 1 5 5 0 -1 0 0 0 0 0 12 34 0 0",
			want: Stat{PID: 5, Comm: "candec", State: 'Z', UTime: 12, STime: 34},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseStat([]byte(tt.line))
			if err != nil {
				t.Fatalf("ParseStat: %v", err)
			}
			if got != tt.want {
				t.Errorf("ParseStat = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseStatErrors(t *testing.T) {
	for _, line := range []string{
		"",
		"1234 mosquitto S 1",
		"x (a) S 1 2 3 4 5 6 7 8 9 10 11 12 13",
		"1 (a) S 1 2 3",
		"1 (a) S 1 2 3 4 5 6 7 8 9 10 u 12",
		"1 (a) S 1 2 3 4 5 6 7 8 9 10 11 -12",
		"1 (a) SS 1 2 3 4 5 6 7 8 9 10 11 12",
		")1 (",
	} {
		if _, err := ParseStat([]byte(line)); !errors.Is(err, ErrFormat) {
			t.Errorf("ParseStat(%q) error = %v, want ErrFormat", line, err)
		}
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("1234 (mosquitto) S 1 1234 1234 0 -1 4194560 312 0 0 0 157 42 0 0 20 0 1 0"))
	f.Add([]byte("77 (my (odd) proc) x) R 1 77 77 0 -1 4194304 10 0 0 0 9001 1 0 0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseStat(b)
		if err != nil {
			return
		}
		// What parsed must survive formatting and parsing again.
		line := fmt.Sprintf("%d (%s) %c 0 0 0 0 0 0 0 0 0 0 %d %d 0 0", s.PID, s.Comm, s.State, s.UTime, s.STime)
		again, err := ParseStat([]byte(line))
		if err != nil || again != s {
			t.Errorf("ParseStat(%q) = %+v; formatted back and parsed: %+v, %v", b, s, again, err)
		}
	})
}

func TestParseAuxv(t *testing.T) {
	vec := func(word int, pairs ...uint64) []byte {
		var b []byte
		for _, v := range pairs {
			if word == 4 {
				b = binary.NativeEndian.AppendUint32(b, uint32(v))
			} else {
				b = binary.NativeEndian.AppendUint64(b, v)
			}
		}
		return b
	}
	tests := []struct {
		name   string
		b      []byte
		word   int
		want   int
		wantOK bool
	}{
		{"64-bit", vec(8, 33, 0xdead, 16, 0xbfebfbff, 6, 4096, 17, 100, 3, 0x40, 0, 0), 8, 100, true},
		{"32-bit, 250 Hz", vec(4, 6, 4096, 17, 250, 0, 0), 4, 250, true},
		{"missing", vec(8, 6, 4096, 0, 0, 17, 100), 8, 0, false},
		{"truncated", vec(8, 6, 4096, 17)[:20], 8, 0, false},
		{"zero value", vec(8, 17, 0, 0, 0), 8, 0, false},
	}
	for _, tt := range tests {
		got, ok := parseAuxv(tt.b, tt.word)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("%s: parseAuxv = %d, %v, want %d, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestClockTicksFromThisProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/auxv"); err != nil {
		t.Skip("no /proc/self/auxv")
	}
	b, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		t.Skip(err)
	}
	want, ok := parseAuxv(b, 8)
	if !ok {
		t.Fatalf("no AT_CLKTCK in this process's auxiliary vector")
	}
	if got := ClockTicks(); got != want {
		t.Errorf("ClockTicks() = %d, want %d", got, want)
	}
}

func TestPercent(t *testing.T) {
	tests := []struct {
		before, after Stat
		elapsed       time.Duration
		hz            int
		want          float64
	}{
		{Stat{UTime: 100, STime: 50}, Stat{UTime: 150, STime: 100}, 2 * time.Second, 100, 50},
		{Stat{}, Stat{UTime: 300, STime: 100}, 2 * time.Second, 100, 200},
		{Stat{}, Stat{UTime: 250}, time.Second, 250, 100},
		{Stat{UTime: 5}, Stat{UTime: 4}, time.Second, 100, 0},
		{Stat{}, Stat{UTime: 4}, 0, 100, 0},
	}
	for _, tt := range tests {
		if got := Percent(tt.before, tt.after, tt.elapsed, tt.hz); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("Percent(%v → %v over %v at %d Hz) = %v, want %v", tt.before.Ticks(), tt.after.Ticks(), tt.elapsed, tt.hz, got, tt.want)
		}
	}
}

func TestMeterMeasuresBusyProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	var m Meter
	m.Add("self", os.Getpid())
	start := time.Now()
	if err := m.Start(start); err != nil {
		t.Fatal(err)
	}
	// Burn CPU until the kernel has charged at least 5 ticks to us.
	before, _ := Read(os.Getpid())
	x := 1.0
	for {
		for range 1_000_000 {
			x = math.Sqrt(x + 1)
		}
		s, err := Read(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if s.Ticks()-before.Ticks() >= 5 {
			break
		}
	}
	u, err := m.Stop(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(u) != 1 || u[0].Name != "self" || u[0].PID != os.Getpid() {
		t.Fatalf("Stop = %+v, want one usage of self", u)
	}
	if busy, _ := m.Machine(); busy <= 0 {
		t.Errorf("Machine() busy = %v while this process burned CPU, want > 0", busy)
	}
	if u[0].CPU < 5*time.Second/time.Duration(ClockTicks()) || u[0].Percent <= 0 {
		t.Errorf("Stop = CPU %v, %.1f %%, want at least 5 ticks and a positive share", u[0].CPU, u[0].Percent)
	}
	_ = x
}

func TestMeterGoneProcess(t *testing.T) {
	var m Meter
	m.Add("ghost", 1<<30)
	if err := m.Start(time.Now()); err == nil {
		t.Error("Start with a process that does not exist: got nil error, want one")
	}
}

func TestParseSystem(t *testing.T) {
	in := "cpu  100 5 50 1000 20 3 2 1 0 0\ncpu0 50 2 25 500 10 1 1 0 0 0\nintr 12345\n"
	got, err := ParseSystem([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if want := (System{Busy: 100 + 5 + 50 + 3 + 2 + 1, Idle: 1000 + 20}); got != want {
		t.Errorf("ParseSystem = %+v, want %+v", got, want)
	}
	for _, bad := range []string{"", "intr 1\n", "cpu a b c d e\n"} {
		if _, err := ParseSystem([]byte(bad)); !errors.Is(err, ErrFormat) {
			t.Errorf("ParseSystem(%q) error = %v, want ErrFormat", bad, err)
		}
	}
}
