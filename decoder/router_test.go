package decoder

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/frame"
)

// names is a Namer: bus index → interface name.
type names map[uint8]string

func (n names) Interface(bus uint8) string { return n[bus] }

var testNames = names{0: "can0", 1: "can1", 2: "can2", 7: "can7"}

// routerDBs are a car database (0x100 Motor, 8 signals) and a radar's,
// whose 0x100 is another message.
func routerDBs(t testing.TB) (car, radar *dbc.Database) {
	car = database(t, benchMessage())
	radar = database(t,
		message("Target", 0x100, 4, intel("range", 0, 16, false, 0.01, 0), intel("angle", 16, 16, true, 0.1, 0)),
		message("Status", 0x200, 1, intel("ok", 0, 1, false, 1, 0)),
	)
	return car, radar
}

// on puts f on bus with the given flags.
func on(bus uint8, f *frame.Frame, flags frame.Flags) *frame.Frame {
	f.Bus, f.Flags = bus, flags
	return f
}

func TestRouter(t *testing.T) {
	car, radar := routerDBs(t)
	motor := func(bus uint8) *frame.Frame { return on(bus, benchFrame(), 0) }
	target := func(bus uint8) *frame.Frame { return on(bus, frameOf(0x100, 1, 2, 3, 4), 0) }
	allMotor := "Motor.rpm Motor.torque Motor.gear Motor.voltage Motor.current Motor.brake Motor.ready Motor.temp"
	type step struct {
		f    *frame.Frame
		want string // the values' full names, or "-" for ok false
	}
	for _, tc := range []struct {
		name   string
		cfg    RouterConfig
		steps  []step
		buses  []BusStats
		unseen []string
	}{
		{
			name: "default and per interface",
			cfg:  RouterConfig{All: car, Interfaces: map[string]*dbc.Database{"can1": radar, "can7": radar}},
			steps: []step{
				{motor(0), allMotor},
				{target(1), "Target.range Target.angle"},
				{motor(2), allMotor}, // not named: the default
				{on(0, frameOf(0x7FF, 0), 0), "-"},
				{on(1, frameOf(0x200, 1), 0), "Status.ok"},
				{on(0, frameOf(0x100), frame.Remote), "-"},
				{on(0, frameOf(0x20000004, 0, 4, 0, 0, 0, 0, 0, 0), frame.Error|frame.Extended), "-"},
				{on(0, frameOf(0x100, 0x10, 0x27), 0), "Motor.rpm Motor.torque Motor.gear Motor.voltage Motor.current Motor.brake Motor.ready Motor.temp"},
			},
			buses: []BusStats{
				{Bus: 0, Interface: "can0", Routed: true, Frames: 5, Unknown: 1, Remote: 1, ErrorFrames: 1, Short: 1},
				{Bus: 1, Interface: "can1", Routed: true, Frames: 2},
				{Bus: 2, Interface: "can2", Routed: true, Frames: 1},
			},
			unseen: []string{"can7"},
		},
		{
			name: "no database for an interface",
			cfg:  RouterConfig{Interfaces: map[string]*dbc.Database{"can1": radar}},
			steps: []step{
				{motor(0), "-"},
				{on(0, frameOf(0x100), frame.Remote), "-"}, // counted as remote all the same
				{target(1), "Target.range Target.angle"},
			},
			buses: []BusStats{
				{Bus: 0, Interface: "can0", Frames: 2, Remote: 1},
				{Bus: 1, Interface: "can1", Routed: true, Frames: 1},
			},
		},
		{
			name: "signal globs on name and message.signal",
			cfg:  RouterConfig{All: car, Interfaces: map[string]*dbc.Database{"can1": radar}, Signals: []string{"rpm", "temp", "Target.*"}},
			steps: []step{
				{motor(0), "Motor.rpm Motor.temp"},
				{target(1), "Target.range Target.angle"},
				{on(1, frameOf(0x200, 1), 0), ""}, // decoded, nothing selected
			},
			buses: []BusStats{
				{Bus: 0, Interface: "can0", Routed: true, Frames: 1},
				{Bus: 1, Interface: "can1", Routed: true, Frames: 2},
			},
		},
		{
			name:  "empty stream",
			cfg:   RouterConfig{All: car, Interfaces: map[string]*dbc.Database{"can1": radar, "can0": car}},
			steps: nil, buses: nil, unseen: []string{"can0", "can1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewRouter(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range tc.steps {
				vals, ok := r.Decode(s.f, testNames)
				got := "-"
				if ok {
					var ns []string
					for _, v := range vals {
						ns = append(ns, v.Signal.FullName())
					}
					got = strings.Join(ns, " ")
				}
				if got != s.want {
					t.Errorf("frame %d (%X on bus %d): got %q, want %q", i, s.f.ID, s.f.Bus, got, s.want)
				}
			}
			if got := r.Buses(); !reflect.DeepEqual(got, tc.buses) {
				t.Errorf("got buses\n%+v\nwant\n%+v", got, tc.buses)
			}
			if got := r.Unseen(); !reflect.DeepEqual(got, tc.unseen) {
				t.Errorf("got unseen %q, want %q", got, tc.unseen)
			}
		})
	}
}

func TestRouterGlobs(t *testing.T) {
	car, radar := routerDBs(t)
	for _, tc := range []struct {
		globs     []string
		unmatched []string
		err       bool
	}{
		{globs: nil},
		{globs: []string{"rpm", "Status.*"}},
		{globs: []string{"rpm", "nosuch*", "Motor.rpmx"}, unmatched: []string{"nosuch*", "Motor.rpmx"}},
		{globs: []string{"[rpm"}, err: true},
	} {
		t.Run(fmt.Sprint(tc.globs), func(t *testing.T) {
			r, err := NewRouter(RouterConfig{All: car, Interfaces: map[string]*dbc.Database{"can1": radar}, Signals: tc.globs})
			if tc.err {
				if !errors.Is(err, ErrGlob) {
					t.Errorf("got error %v, want ErrGlob", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Unmatched(); !reflect.DeepEqual(got, tc.unmatched) {
				t.Errorf("got unmatched %q, want %q", got, tc.unmatched)
			}
		})
	}
}

// TestRouterShared: interfaces given one database share one Decoder,
// and each bus still counts its own short frames.
func TestRouterShared(t *testing.T) {
	car, _ := routerDBs(t)
	r, err := NewRouter(RouterConfig{All: car, Interfaces: map[string]*dbc.Database{"can1": car}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.routes) != 1 {
		t.Errorf("got %d decoders, want 1", len(r.routes))
	}
	r.Decode(on(0, frameOf(0x100, 1), 0), testNames)
	r.Decode(on(1, frameOf(0x100, 1, 2), 0), testNames)
	r.Decode(on(1, frameOf(0x100, 1, 2), 0), testNames)
	var got []uint64
	for _, b := range r.Buses() {
		got = append(got, b.Short)
	}
	if !reflect.DeepEqual(got, []uint64{1, 2}) {
		t.Errorf("got short frames per bus %v, want [1 2]", got)
	}
}

func TestRouterAllocs(t *testing.T) {
	car, radar := routerDBs(t)
	r, err := NewRouter(RouterConfig{All: car, Interfaces: map[string]*dbc.Database{"can1": radar}, Signals: []string{"rpm", "Target.*"}})
	if err != nil {
		t.Fatal(err)
	}
	var ns Namer = testNames
	frames := []*frame.Frame{on(0, benchFrame(), 0), on(1, frameOf(0x100, 1, 2, 3, 4), 0), on(0, frameOf(0x7FF), 0), on(2, frameOf(0x100), frame.Remote)}
	n := testing.AllocsPerRun(100, func() {
		for _, f := range frames {
			r.Decode(f, ns)
		}
	})
	if n != 0 {
		t.Errorf("got %v allocations per 4 frames, want 0", n)
	}
}

// BenchmarkRouterDecode8Signals is BenchmarkDecode8Signals through a
// Router with a per-interface database and a signal filter.
func BenchmarkRouterDecode8Signals(b *testing.B) {
	car, radar := routerDBs(b)
	r, err := NewRouter(RouterConfig{All: car, Interfaces: map[string]*dbc.Database{"can1": radar}, Signals: []string{"*"}})
	if err != nil {
		b.Fatal(err)
	}
	var ns Namer = testNames
	f := benchFrame()
	var vals []Value
	b.ReportAllocs()
	for b.Loop() {
		vals, _ = r.Decode(f, ns)
	}
	sinkF = vals[0].Phys
}

// TestRouterSelect: Select says of every frame what Decode's ok says,
// and counts it the same, without decoding; it allocates nothing.
func TestRouterSelect(t *testing.T) {
	car, radar := routerDBs(t)
	cfgs := []RouterConfig{
		{All: car},
		{Interfaces: map[string]*dbc.Database{"can0": car, "can1": radar}},
		{All: car, Interfaces: map[string]*dbc.Database{"can1": radar, "can7": nil}},
	}
	frames := []*frame.Frame{
		on(0, benchFrame(), 0), on(1, benchFrame(), 0), on(1, frameOf(0x100, 1, 2), 0), // short Target
		on(1, frameOf(0x200, 1), 0), on(0, frameOf(0x200, 1), 0), on(2, frameOf(0x7FF), 0),
		on(0, benchFrame(), frame.Remote), on(1, frameOf(0x200), frame.Error), on(7, benchFrame(), 0),
	}
	for i, cfg := range cfgs {
		dec, _ := NewRouter(cfg)
		sel, _ := NewRouter(cfg)
		for j, f := range frames {
			_, want := dec.Decode(f, testNames)
			if got := sel.Select(f, testNames); got != want {
				t.Errorf("config %d, frame %d (%X on bus %d): Select %v, Decode's ok %v", i, j, f.ID, f.Bus, got, want)
			}
			if got, want := sel.Routed(f.Bus), dec.Buses() != nil && dec.stats[f.Bus].Routed; got != want {
				t.Errorf("config %d, frame %d: Routed %v, want %v", i, j, got, want)
			}
		}
		if got, want := sel.Buses(), dec.Buses(); !reflect.DeepEqual(got, want) {
			t.Errorf("config %d: Select counted\n%+v\nDecode\n%+v", i, got, want)
		}
	}
	r, _ := NewRouter(cfgs[1])
	f := on(1, frameOf(0x200, 1), 0)
	if n := testing.AllocsPerRun(100, func() { r.Select(f, testNames) }); n != 0 {
		t.Errorf("Select: %v allocations, want 0", n)
	}
}

// TestRouterSharedAll: the database for every interface is named when
// it knew frames of two buses or more, not for frames it did not know
// nor for interfaces that have their own.
func TestRouterSharedAll(t *testing.T) {
	car, radar := routerDBs(t)
	for _, tc := range []struct {
		name   string
		cfg    RouterConfig
		frames []*frame.Frame
		want   []string
	}{
		{"two buses", RouterConfig{All: car}, []*frame.Frame{on(0, benchFrame(), 0), on(1, benchFrame(), 0)}, []string{"can0", "can1"}},
		{"one bus", RouterConfig{All: car}, []*frame.Frame{on(0, benchFrame(), 0), on(0, benchFrame(), 0)}, nil},
		{"unknown IDs on the other", RouterConfig{All: car}, []*frame.Frame{on(0, benchFrame(), 0), on(1, frameOf(0x7FF), 0)}, nil},
		{"remote frames on the other", RouterConfig{All: car}, []*frame.Frame{on(0, benchFrame(), 0), on(1, benchFrame(), frame.Remote)}, nil},
		{"the other has its own", RouterConfig{All: car, Interfaces: map[string]*dbc.Database{"can1": radar}},
			[]*frame.Frame{on(0, benchFrame(), 0), on(1, benchFrame(), 0)}, nil},
		{"by interface only", RouterConfig{Interfaces: map[string]*dbc.Database{"can0": car, "can1": car}},
			[]*frame.Frame{on(0, benchFrame(), 0), on(1, benchFrame(), 0)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := NewRouter(tc.cfg)
			for _, f := range tc.frames {
				r.Select(f, testNames)
			}
			if got := r.SharedAll(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
