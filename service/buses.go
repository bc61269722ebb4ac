package service

import (
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
)

// busNames names the interface of a raw frame by its bus index, as the
// raw batch's format does (package rawbatch: 0 is can0): the IFACE of
// dbc's IFACE=FILE. A Router asks once for each bus, at its first frame.
type busNames struct{}

func (busNames) Interface(bus uint8) string { return "can" + strconv.Itoa(int(bus)) }

// NewBuses is New for the DBCs by interface of Config.DBCFiles, loaded
// with dbc.LoadBuses. The frames of an interface are decoded with its
// own DBC alone (see decoder.Selector); those of an interface without
// one are counted (candec_frames_no_dbc_total), logged once for each
// interface, and left out, never decoded with another interface's. A
// DBC for every interface that decodes frames of two buses or more is
// logged once: most likely one bus's DBC read as another's.
func NewBuses(cfg Config, b *dbc.Buses, log *slog.Logger, reg prometheus.Registerer) (*Service, error) {
	m, err := b.Merged()
	if err != nil {
		return nil, err
	}
	s, err := New(cfg, m.DB, log, reg)
	if err != nil {
		return nil, err
	}
	s.buses = &busCheck{sel: decoder.NewSelector(b, m)}
	return s, nil
}

// busCheck is what NewBuses adds to a service, owned by the engine
// goroutine.
type busCheck struct {
	sel *decoder.Selector
	// left are the Selector's counts last moved into the metrics.
	noDatabase, unknown uint64
	logged              [256]bool // a bus without a DBC, logged
	shared              bool      // SharedAll, logged
	nextShared          time.Time // when to look at SharedAll again
}

// take reports whether the engine takes s.f (see NewBuses), having
// given it the ID of its message in the engine's database. The service
// has s.buses.
func (s *Service) take() bool {
	c := s.buses
	if c.sel.Select(&s.f, busNames{}) {
		return true
	}
	if r := c.sel.Router(); !r.Routed(s.f.Bus) && !c.logged[s.f.Bus] {
		c.logged[s.f.Bus] = true
		s.log.Warn("frames of an interface without a DBC are left out (counted in candec_frames_no_dbc_total)",
			"interface", busNames{}.Interface(s.f.Bus), "dbc", strings.Join(s.cfg.DBC, ","))
	}
	return false
}

// syncBuses moves the counts of the frames take left out into the
// metrics, and logs a DBC for every interface that decoded frames of
// several.
func (s *Service) syncBuses() {
	c := s.buses
	if c == nil {
		return
	}
	noDB, unknown, clashes := c.sel.Left()
	s.m.noDBC.Add(float64(noDB - c.noDatabase))
	s.m.unknownID.Add(float64(unknown + clashes - c.unknown))
	c.noDatabase, c.unknown = noDB, unknown+clashes
	// SharedAll looks at every bus: once a second is soon enough.
	now := s.now()
	if c.shared || now.Before(c.nextShared) {
		return
	}
	c.nextShared = now.Add(time.Second)
	if shared := c.sel.Router().SharedAll(); shared != nil {
		c.shared = true
		files, _ := s.cfg.DBCFiles()
		s.log.Warn("one DBC, given for every interface, decodes frames of several: most likely one bus's DBC read as another's; give each its own with dbc IFACE=FILE",
			"dbc", strings.Join(files.All, ","), "interfaces", strings.Join(shared, ","))
	}
}
