package decoder

import (
	"testing"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/frame"
)

// TestSelector: through a Selector, the merged database decodes every
// frame as its own interface's database does (the radar's 0x100 is not
// the car's), a frame of an interface without a database is left out,
// and Select allocates nothing.
func TestSelector(t *testing.T) {
	car, radar := routerDBs(t)
	for _, tc := range []struct {
		name  string
		buses *dbc.Buses
	}{
		{"two databases", &dbc.Buses{
			Files:      dbc.BusFiles{Interfaces: map[string][]string{"can0": {"car.dbc"}, "can1": {"radar.dbc"}}},
			Interfaces: map[string]*dbc.Database{"can0": car, "can1": radar}}},
		{"one for all, one by interface", &dbc.Buses{
			Files:      dbc.BusFiles{All: []string{"car.dbc"}, Interfaces: map[string][]string{"can1": {"radar.dbc"}}},
			All:        car,
			Interfaces: map[string]*dbc.Database{"can1": radar}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.buses.Merged()
			if err != nil {
				t.Fatal(err)
			}
			ref, _ := NewRouter(RouterConfig{All: tc.buses.All, Interfaces: tc.buses.Interfaces})
			sel := NewSelector(tc.buses, m)
			dec := New(m.DB)
			buf := make([]Value, 0, dec.MaxSignals())
			frames := []*frame.Frame{
				on(0, benchFrame(), 0), on(1, frameOf(0x100, 1, 2, 3, 4), 0), on(1, frameOf(0x200, 1), 0),
				on(0, frameOf(0x200, 1), 0), on(7, benchFrame(), 0), on(1, frameOf(0x7FF), 0),
			}
			for i, f := range frames {
				want, wok := ref.Decode(f, testNames)
				wantNames := fullNames(want)
				g := *f
				if ok := sel.Select(&g, testNames); ok != wok {
					t.Errorf("frame %d (%X on %s): Select %v, the Router decodes it: %v", i, f.ID, testNames[f.Bus], ok, wok)
					continue
				} else if !ok {
					continue
				}
				_, got := dec.Decode(&g, buf[:0])
				if fullNames(got) != wantNames {
					t.Errorf("frame %d (%X on %s): the merged database decodes %q, its interface's %q", i, f.ID, testNames[f.Bus], fullNames(got), wantNames)
				}
				for j := range got {
					if j < len(want) && got[j].Phys != want[j].Phys {
						t.Errorf("frame %d, %s: got %v, want %v", i, got[j].Signal.FullName(), got[j].Phys, want[j].Phys)
					}
				}
			}
			f := on(1, frameOf(0x100, 1, 2, 3, 4), 0)
			if n := testing.AllocsPerRun(100, func() { g := *f; sel.Select(&g, testNames) }); n != 0 {
				t.Errorf("Select: %v allocations, want 0", n)
			}
		})
	}
}

func fullNames(vals []Value) string {
	s := ""
	for _, v := range vals {
		s += v.Signal.FullName() + " "
	}
	return s
}

// BenchmarkSelectorSelect is what the service adds per frame with a DBC
// by interface (dbc IFACE=FILE): the choice of the frame and its new
// ID, for the radar's 0x100, which the car's DBC also defines.
func BenchmarkSelectorSelect(b *testing.B) {
	car, radar := routerDBs(b)
	buses := &dbc.Buses{
		Files:      dbc.BusFiles{Interfaces: map[string][]string{"can0": {"car.dbc"}, "can1": {"radar.dbc"}}},
		Interfaces: map[string]*dbc.Database{"can0": car, "can1": radar}}
	m, err := buses.Merged()
	if err != nil {
		b.Fatal(err)
	}
	s := NewSelector(buses, m)
	var ns Namer = testNames
	f := on(1, frameOf(0x100, 1, 2, 3, 4), 0)
	g := *f
	ok := false
	b.ReportAllocs()
	for b.Loop() {
		g.ID = f.ID
		ok = s.Select(&g, ns)
	}
	if !ok {
		b.Fatal("not selected")
	}
}
