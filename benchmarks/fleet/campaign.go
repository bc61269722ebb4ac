package fleet

// A campaign pushed mid-run: the cars take it from the broker as the
// car does, and the run reports the fleet before and after it.

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/yukart/candec/campaign"
	"github.com/yukart/candec/pipeline"
)

// Campaign is a signed campaign a run pushes in the middle of its
// measured window (Config.Campaign).
type Campaign struct {
	// Payload is the campaign file, as `candec campaign sign` writes it.
	Payload []byte
	// Key is the public key the cars trust (a car's campaign_key).
	Key ed25519.PublicKey
	// DBC is the hash of the cars' DBC files (dbc.BusFiles.Hash), which
	// a car checks the campaign's against.
	DBC string
	// At is when the run pushes it, from the measured window's start:
	// 0 < At < Config.Duration.
	At time.Duration
}

// CampaignResult is what a run measured of its campaign: who took it,
// and the fleet before and after the push.
type CampaignResult struct {
	Version  uint64 `json:"version"`
	Vehicles string `json:"vehicles"`
	// At is when it was pushed, from the measured window's start.
	At time.Duration `json:"at_ns"`
	// Pushed is how many cars' policy topics it was published on;
	// Applied how many cars verified and applied it; Refused how many
	// refused it, by reason.
	Pushed  int            `json:"pushed"`
	Applied int            `json:"applied"`
	Refused map[string]int `json:"refused,omitempty"`
	// ApplyFirst and ApplyLast are the shortest and the longest from
	// the push's start to a car's switch (the push publishes to one car
	// after the other).
	ApplyFirst time.Duration `json:"apply_first_ns"`
	ApplyLast  time.Duration `json:"apply_last_ns"`
	// Before and After are the bench's figures over the measured window
	// up to the push and from it.
	Before Phase `json:"before"`
	After  Phase `json:"after"`
	// Versions are the windows committed to the lake per policy
	// version, before and after each car's switch.
	Versions []VersionFigures `json:"versions"`
}

// Phase is the bench's figures over a part of the measured window.
type Phase struct {
	Measured     time.Duration `json:"measured_ns"`
	WindowValues float64       `json:"window_values"`
	IngestCPU    time.Duration `json:"ingest_cpu_ns"`
	BrokerCPU    time.Duration `json:"broker_cpu_ns"`
	CarsCPU      time.Duration `json:"cars_cpu_ns"`
	DeliveryP50  time.Duration `json:"delivery_p50_ns"`
	DeliveryP99  time.Duration `json:"delivery_p99_ns"`
	nodes        []NodeUsage   // each NATS node's CPU in the phase
}

// VersionFigures are the windows of one policy version that the lake
// committed in one phase of the measured window: before a car's switch
// (the push, for a car that did not switch) or after it.
type VersionFigures struct {
	After   bool   `json:"after"`
	Version uint64 `json:"version"`
	// Cars is how many cars ran the version in the phase; CarSeconds
	// the time they ran it there, summed.
	Cars       int     `json:"cars"`
	CarSeconds float64 `json:"car_seconds"`
	Windows    int     `json:"windows"`
	Values     int     `json:"values"`
}

// PerCarSecond returns n per second of one car.
func (v *VersionFigures) PerCarSecond(n int) float64 {
	if v.CarSeconds <= 0 {
		return 0
	}
	return float64(n) / v.CarSeconds
}

// openCampaign checks the campaign a run is to push: its signature
// with the cars' key, its time, and that the cars Live names those it
// is for have engines to apply it with.
func openCampaign(cfg Config) (*campaign.Campaign, error) {
	cc := cfg.Campaign
	if cc.At <= 0 || cc.At >= cfg.Duration {
		return nil, fmt.Errorf("fleet: campaign at %v into a window of %v: it must be inside it", cc.At, cfg.Duration)
	}
	camp, err := campaign.Open(cc.Payload, cc.Key)
	if err != nil {
		return nil, fmt.Errorf("fleet: the cars would refuse the campaign: %w", err)
	}
	n := 0
	for i := range cfg.Cars {
		c := &cfg.Cars[i]
		if !camp.For(c.ID) {
			continue
		}
		n++
		if c.live == nil || c.live.done() || c.Start+int64(cfg.Warmup+cc.At) < c.live.eng.Now() {
			return nil, fmt.Errorf("fleet: car %s is one campaign version %d is for, but its drive was made before the run past the push", c.ID, camp.Version)
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("fleet: campaign version %d is for vehicles %q, which none of the %d cars is", camp.Version, camp.Vehicles, len(cfg.Cars))
	}
	return camp, nil
}

// taken is a campaign a car verified, with the policy it loaded.
type taken struct {
	version uint64
	policy  *pipeline.PolicyFile
}

// carCampaign is a car's side of campaigns.
type carCampaign struct {
	key ed25519.PublicKey
	dbc string
	in  chan taken // room for one: a newer one replaces it

	mu       sync.Mutex
	applied  uint64          // the version it runs
	switched time.Duration   // where in its drive it switched
	refused  campaign.Reason // why it refused the last it refused
}

// take is the car's handler of its policy topic: it checks the
// campaign as the car's service does (campaign.Open, then Check against
// the car, then the policy loads) and hands it to the car's drive.
func (c *car) take(_, payload []byte, now int64) {
	cc := c.camp
	if len(payload) == 0 {
		return
	}
	cc.mu.Lock()
	car := campaign.Car{Vehicle: c.c.ID, Applied: cc.applied, DBC: cc.dbc}
	cc.mu.Unlock()
	camp, err := campaign.Open(payload, cc.key)
	if err == nil && camp.Version == car.Applied {
		return // the applied campaign again, as the service ignores it
	}
	if err == nil {
		err = camp.Check(car, time.Unix(0, now))
	}
	var p *pipeline.PolicyFile
	if err == nil {
		p, err = pipeline.ParsePolicy(fmt.Sprintf("campaign version %d", camp.Version), []byte(camp.Policy))
		if err != nil {
			err = &campaign.Refusal{Reason: campaign.ReasonPolicy, Msg: err.Error()}
		}
	}
	if err == nil && c.c.live == nil {
		// Run's openCampaign makes sure of the cars it is for.
		err = &campaign.Refusal{Reason: "bench: drive made before the run", Msg: "this car cannot apply a campaign"}
	}
	if err != nil {
		cc.refuse(err)
		return
	}
	for {
		select {
		case cc.in <- taken{version: camp.Version, policy: p}:
			return
		default:
		}
		select {
		case <-cc.in:
		default:
		}
	}
}

func (cc *carCampaign) refuse(err error) {
	var r *campaign.Refusal
	if !errors.As(err, &r) {
		r = &campaign.Refusal{Reason: campaign.ReasonFormat, Msg: err.Error()}
	}
	cc.mu.Lock()
	cc.refused = r.Reason
	cc.mu.Unlock()
}

// apply applies a verified campaign at drive time at (from the car's
// Start).
func (c *car) apply(t taken, at time.Duration) {
	d := c.c.live
	ft := max(c.c.Start+int64(at), d.eng.Now())
	if err := d.apply(ft, t.version, t.policy); err != nil {
		c.camp.refuse(&campaign.Refusal{Reason: campaign.ReasonPolicy, Msg: err.Error()})
		return
	}
	c.camp.mu.Lock()
	c.camp.applied, c.camp.switched = t.version, time.Duration(ft-c.c.Start)
	c.camp.refused = ""
	c.camp.mu.Unlock()
}

// push publishes the campaign, retained, on the policy topic of every
// car it is for, as `candec campaign push` does, through the cloud.
func (r *run) push(ctx context.Context) (int, error) {
	ids := make([]string, len(r.cfg.Cars))
	for i := range r.cfg.Cars {
		ids[i] = r.cfg.Cars[i].ID
	}
	pushed, err := r.cloud.push(ctx, r.cfg.Campaign.Payload, ids)
	if err != nil {
		return pushed, fmt.Errorf("fleet: push the campaign: %w", err)
	}
	return pushed, nil
}

// phaseKey names a row of CampaignResult.Versions.
type phaseKey struct {
	after   bool
	version uint64
}

// versions gathers CampaignResult.Versions from the committed windows:
// a car's part of the measured window is before its switch (the push,
// for a car that did not switch) or after it.
type versions struct {
	open, close time.Duration // the measured window, in drive time
	split       map[*Car]time.Duration
	rows        map[phaseKey]*VersionFigures
}

// newVersions makes the rows of each car's time: cars is the run's,
// pushAt when the push started.
func newVersions(cfg Config, cars []*car, pushAt time.Duration) *versions {
	vs := &versions{open: cfg.Warmup, close: cfg.Warmup + cfg.Duration,
		split: map[*Car]time.Duration{}, rows: map[phaseKey]*VersionFigures{}}
	for _, c := range cars {
		split, after := pushAt, uint64(0)
		c.camp.mu.Lock()
		if c.camp.applied > 0 {
			split, after = c.camp.switched, c.camp.applied
		}
		c.camp.mu.Unlock()
		split = min(max(split, vs.open), vs.close)
		vs.split[c.c] = split
		for _, p := range []struct {
			k phaseKey
			d time.Duration
		}{{phaseKey{false, 0}, split - vs.open}, {phaseKey{true, after}, vs.close - split}} {
			if p.d > 0 {
				row := vs.row(p.k)
				row.Cars++
				row.CarSeconds += p.d.Seconds()
			}
		}
	}
	return vs
}

func (vs *versions) row(k phaseKey) *VersionFigures {
	row := vs.rows[k]
	if row == nil {
		row = &VersionFigures{After: k.after, Version: k.version}
		vs.rows[k] = row
	}
	return row
}

// add counts a window of car c the lake committed.
func (vs *versions) add(c *Car, w *Window) {
	if vs == nil || w.At <= vs.open || w.At > vs.close {
		return
	}
	row := vs.row(phaseKey{w.At > vs.split[c], w.Policy})
	row.Windows++
	row.Values += w.Values
}

// figures returns the rows: before, then after, each by version.
func (vs *versions) figures() []VersionFigures {
	out := make([]VersionFigures, 0, len(vs.rows))
	for _, row := range vs.rows {
		out = append(out, *row)
	}
	slices.SortFunc(out, func(a, b VersionFigures) int {
		if a.After != b.After {
			if a.After {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.Version, b.Version)
	})
	return out
}

// takers fills in who took the campaign: applied, refused by reason,
// and how long from the push to the cars' switches.
func (cr *CampaignResult) takers(cars []*car, pushAt time.Duration) {
	for _, c := range cars {
		c.camp.mu.Lock()
		switch {
		case c.camp.applied > 0:
			d := c.camp.switched - pushAt
			if cr.Applied == 0 || d < cr.ApplyFirst {
				cr.ApplyFirst = d
			}
			cr.Applied++
			cr.ApplyLast = max(cr.ApplyLast, d)
		case c.camp.refused != "":
			if cr.Refused == nil {
				cr.Refused = map[string]int{}
			}
			cr.Refused[string(c.camp.refused)]++
		}
		c.camp.mu.Unlock()
	}
}
