package service

// Campaigns: a signed policy pushed from the fleet's cloud, taken on
// campaign_topic, verified, applied as a SIGHUP reload applies a policy
// file, kept on disk and acknowledged (docs/campaigns.md).

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/yukart/candec/campaign"
	"github.com/yukart/candec/internal/base/readfile"
	"github.com/yukart/candec/internal/base/termtext"
	"github.com/yukart/candec/mqttclient"
	"github.com/yukart/candec/pipeline"
)

// DefaultCampaignAckTopic is campaign_ack_topic's default: under the
// decoder's status topics, which bridge.conf carries to the cloud.
const DefaultCampaignAckTopic = "yukart/decoder/campaign"

// CampaignConfig is the campaign keys of Config: campaigns are off
// while Topic is empty (the default).
type CampaignConfig struct {
	// Vehicle is this car's id, which a campaign's glob must match.
	Vehicle string
	// Topic is where the car takes campaigns from (its local broker's
	// topic, which the bridge fills from the cloud).
	Topic string
	// Key is the public key file campaigns must be signed with.
	Key string
	// State is the file that keeps the applied campaign across
	// restarts.
	State string
	// AckTopic carries the car's acknowledgement, retained.
	AckTopic string
}

// ErrCampaignPolicy: a SIGHUP while a campaign's policy runs; the
// policy file is not read.
var ErrCampaignPolicy = errors.New("service: a campaign's policy runs: the policy file is not read while campaigns are on and one is applied")

// validateCampaign checks the campaign keys (from Validate).
func (c *Config) validateCampaign() error {
	cc := &c.Campaign
	if cc.Topic == "" {
		return nil
	}
	checks := []struct {
		key string
		err error
	}{
		{"campaign_topic", checkTopic(cc.Topic)},
		{"campaign_ack_topic", checkTopic(cc.AckTopic)},
	}
	for _, ch := range checks {
		if ch.err != nil {
			return c.errorf(ch.key, "%v", ch.err)
		}
	}
	switch {
	case !campaign.ValidVehicle(cc.Vehicle):
		return c.errorf("vehicle", "campaign_topic needs this car's vehicle id, one topic level (no '/', '+' or '#'), got %s", termtext.Quote(cc.Vehicle))
	case cc.Key == "":
		return c.errorf("campaign_key", "campaign_topic needs the public key file campaigns are signed with")
	case cc.State == "":
		return c.errorf("campaign_state", "campaign_topic needs a file to keep the applied campaign in")
	case cc.AckTopic == cc.Topic || cc.AckTopic == c.StatusTopic || cc.AckTopic == c.WindowTopic:
		return c.errorf("campaign_ack_topic", "%s is also another of the decoder's topics", termtext.Quote(cc.AckTopic))
	case cc.Topic == c.StatusTopic || cc.Topic == c.WindowTopic:
		return c.errorf("campaign_topic", "%s is also another of the decoder's topics", termtext.Quote(cc.Topic))
	}
	for _, t := range []struct{ key, topic string }{{"campaign_topic", cc.Topic}, {"campaign_ack_topic", cc.AckTopic}} {
		if mqttclient.Overlap(c.RawTopic, t.topic) || mqttclient.Overlap(templateFilter(c.TopicTemplate), t.topic) {
			return c.errorf(t.key, "%s is matched by raw_topic or topic_template: give campaigns a topic of their own", termtext.Quote(t.topic))
		}
	}
	return nil
}

// campaignState is the state file: the highest version applied (a
// campaign of this version or older is refused, also after a restart),
// and the campaign applied, as it came.
type campaignState struct {
	Version   uint64          `json:"version"`
	AppliedAt time.Time       `json:"applied_at"`
	Campaign  json.RawMessage `json:"campaign"`
}

// campaigner is the service's campaign side.
type campaigner struct {
	s   *Service
	pub ed25519.PublicKey

	in   chan []byte   // the newest payload taken, room for one
	kick chan struct{} // publish the acknowledgement (a connection came up)

	// Owned by run's goroutine once it runs.
	car     campaign.Car
	waiting *campaign.Campaign // valid from its not_before on
	timer   *time.Timer

	mu   sync.Mutex
	ack  campaign.Ack // what the car acknowledges
	sent bool         // ack has been published as it is

	results *prometheus.CounterVec
	version prometheus.Gauge
}

// newCampaigner reads the key and the state file; it returns the
// campaign policy to run when the state holds one that this car still
// takes (else nil: the policy file runs), and its version.
func newCampaigner(s *Service, reg prometheus.Registerer) (*campaigner, *pipeline.PolicyFile, error) {
	cc := s.cfg.Campaign
	c := &campaigner{s: s, in: make(chan []byte, 1), kick: make(chan struct{}, 1)}
	data, err := readfile.Read(context.Background(), cc.Key, campaign.MaxKeyFileSize)
	if err == nil {
		c.pub, err = campaign.ParsePublicKey(data)
	}
	if err != nil {
		return nil, nil, s.cfg.errorf("campaign_key", "%v", err)
	}
	files, err := s.cfg.DBCFiles()
	if err == nil {
		c.car.DBC, err = files.Hash(context.Background())
	}
	if err != nil {
		return nil, nil, err
	}
	c.car.Vehicle = cc.Vehicle
	c.ack.Vehicle = cc.Vehicle
	p, err := c.loadState()
	if err != nil {
		return nil, nil, s.cfg.errorf("campaign_state", "%v", err)
	}
	if err := c.initMetrics(reg); err != nil {
		return nil, nil, err
	}
	return c, p, nil
}

// loadState reads the state file: a missing one is a car that applied
// no campaign; one that cannot be read stops the start (a car that
// forgot its version would take an older campaign again).
func (c *campaigner) loadState() (*pipeline.PolicyFile, error) {
	data, err := readfile.Read(context.Background(), c.s.cfg.Campaign.State, campaign.MaxSize*2)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st campaignState
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%s: not a campaign state file (%v); remove it only to forget the applied version", c.s.cfg.Campaign.State, err)
	}
	c.car.Applied = st.Version
	camp, err := campaign.Open(st.Campaign, c.pub)
	if err == nil {
		// Its own version is no obstacle: Check sees an older floor.
		car := c.car
		car.Applied = 0
		err = camp.Check(car, camp.NotBefore)
	}
	var p *pipeline.PolicyFile
	if err == nil {
		p, err = pipeline.ParsePolicy(policyName(camp), []byte(camp.Policy))
	}
	if err != nil {
		c.s.log.Warn("the applied campaign no longer applies to this car; the policy file runs", "state", c.s.cfg.Campaign.State, "err", err)
		return nil, nil
	}
	c.ack.Applied = campaign.Applied{Version: camp.Version, Hash: camp.PolicyHash(), At: st.AppliedAt}
	return p, nil
}

func policyName(c *campaign.Campaign) string { return fmt.Sprintf("campaign version %d", c.Version) }

func (c *campaigner) initMetrics(reg prometheus.Registerer) error {
	c.results = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "candec_campaigns_total",
		Help: "Campaigns taken on campaign_topic: applied, or refused by reason (size, format, key, signature, vehicle, version, dbc, not_before, policy).",
	}, []string{"result"})
	c.results.WithLabelValues(campaign.ResultApplied)
	for _, r := range campaign.Reasons {
		c.results.WithLabelValues(string(r))
	}
	c.version = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "candec_campaign_version",
		Help: "The version of the campaign whose policy runs; 0 when none (the policy file, or the built-in policy).",
	})
	c.version.Set(float64(c.ack.Applied.Version))
	for _, col := range []prometheus.Collector{c.results, c.version} {
		if err := reg.Register(col); err != nil {
			return fmt.Errorf("service: register metrics: %w", err)
		}
	}
	return nil
}

// applied returns the version of the campaign that runs, 0 for none.
func (c *campaigner) applied() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ack.Applied.Version
}

// take hands a payload of the campaign topic to run; it never blocks:
// a payload still waiting is replaced by the newer one. An empty one
// is the retained campaign cleared: nothing to take.
func (c *campaigner) take(payload []byte) {
	if len(payload) == 0 {
		return
	}
	// Past MaxSize Open refuses it by its size alone: no need to copy
	// more of a huge one.
	b := append([]byte(nil), payload[:min(len(payload), campaign.MaxSize+1)]...)
	for {
		select {
		case c.in <- b:
			return
		default:
		}
		select {
		case <-c.in:
		default:
		}
	}
}

// up asks run to publish the acknowledgement again: a connection came
// up.
func (c *campaigner) up() {
	c.mu.Lock()
	c.sent = false
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// subscribe subscribes to the campaign topic, asking for its retained
// campaign.
func (c *campaigner) subscribe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	sa, err := c.s.cm.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{
		{Topic: c.s.cfg.Campaign.Topic, QoS: 1, NoLocal: true}}})
	if sa != nil && len(sa.Reasons) > 0 && sa.Reasons[0] >= 0x80 {
		err = &refusedError{code: sa.Reasons[0]}
	}
	return err
}

// run takes the campaigns and publishes the acknowledgements until ctx
// ends.
func (c *campaigner) run(ctx context.Context) {
	c.timer = time.NewTimer(time.Hour)
	c.timer.Stop()
	defer c.timer.Stop()
	for {
		select {
		case p := <-c.in:
			c.handle(ctx, p)
		case <-c.timer.C:
			if w := c.waiting; w != nil {
				c.waiting = nil
				c.apply(ctx, w)
			}
		case <-c.kick:
		case <-ctx.Done():
			return
		}
		c.publishAck(ctx)
	}
}

// handle checks one payload and applies it, or says why not.
func (c *campaigner) handle(ctx context.Context, payload []byte) {
	camp, err := campaign.Open(payload, c.pub)
	if err != nil {
		var version uint64
		if b, perr := campaign.Peek(payload); perr == nil {
			version = b.Version // as the payload says: unverified
		}
		c.refused(version, err)
		return
	}
	c.mu.Lock()
	cur := c.ack.Applied
	c.mu.Unlock()
	if camp.Version == cur.Version && camp.PolicyHash() == cur.Hash {
		return // the applied campaign again: at each (re)connection
	}
	c.apply(ctx, camp)
}

// apply checks the campaign against the car, and applies it: the
// engine runs its policy from now, the state file keeps it.
func (c *campaigner) apply(ctx context.Context, camp *campaign.Campaign) {
	now := c.s.now()
	err := camp.Check(c.car, now)
	var r *campaign.Refusal
	if errors.As(err, &r) && r.Reason == campaign.ReasonNotBefore {
		c.waiting = camp
		c.timer.Reset(camp.NotBefore.Sub(now))
		c.outcome(&campaign.Outcome{Version: camp.Version, Result: campaign.ResultWaiting, Detail: r.Msg, At: now.UTC()})
		c.s.log.Info("campaign valid from its not_before on: it waits", "version", camp.Version, "not_before", camp.NotBefore)
		return
	}
	if err != nil {
		c.refused(camp.Version, err)
		return
	}
	p, err := pipeline.ParsePolicy(policyName(camp), []byte(camp.Policy))
	if err != nil {
		c.refused(camp.Version, &campaign.Refusal{Reason: campaign.ReasonPolicy, Msg: err.Error()})
		return
	}
	ch, err := c.s.onEngine(ctx, reloadReq{policy: p, version: camp.Version, campaign: true})
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, ErrStopped) {
			c.refused(camp.Version, &campaign.Refusal{Reason: campaign.ReasonPolicy, Msg: err.Error()})
		}
		return
	}
	c.waiting = nil
	c.timer.Stop()
	c.car.Applied = camp.Version
	applied := campaign.Applied{Version: camp.Version, Hash: camp.PolicyHash(), At: now.UTC()}
	out := &campaign.Outcome{Version: camp.Version, Result: campaign.ResultApplied, At: now.UTC()}
	if err := c.save(camp, now); err != nil {
		// It runs; after a restart the car runs its policy file until
		// the retained campaign comes again.
		out.Detail = "not kept on disk: " + err.Error()
		c.s.log.Error("campaign applied but not kept on disk", "state", c.s.cfg.Campaign.State, "err", err)
	}
	c.mu.Lock()
	c.ack.Applied = applied
	c.mu.Unlock()
	c.version.Set(float64(camp.Version))
	c.results.WithLabelValues(campaign.ResultApplied).Inc()
	c.outcome(out)
	c.s.log.Info(fmt.Sprintf("campaign applied: %d signals changed", ch.Changed), "version", camp.Version,
		"policy", applied.Hash, "now_published", ch.Published, "now_unpublished", ch.Unpublished)
}

// refused counts and acknowledges a refusal.
func (c *campaigner) refused(version uint64, err error) {
	var r *campaign.Refusal
	if !errors.As(err, &r) {
		r = &campaign.Refusal{Reason: campaign.ReasonFormat, Msg: err.Error()}
	}
	c.results.WithLabelValues(string(r.Reason)).Inc()
	c.outcome(&campaign.Outcome{Version: version, Result: campaign.ResultRefused, Reason: r.Reason, Detail: r.Msg, At: c.s.now().UTC()})
	c.s.log.Warn("campaign refused; the running policy stays", "version", version, "reason", string(r.Reason), "err", r.Msg)
}

func (c *campaigner) outcome(o *campaign.Outcome) {
	c.mu.Lock()
	c.ack.Last, c.sent = o, false
	c.mu.Unlock()
}

// publishAck publishes the acknowledgement, retained, unless the broker
// has it already; a failure is tried again at the next connection.
func (c *campaigner) publishAck(ctx context.Context) {
	c.mu.Lock()
	if c.sent || !c.s.connected.Load() {
		c.mu.Unlock()
		return
	}
	payload, _ := json.Marshal(c.ack)
	c.sent = true
	c.mu.Unlock()
	ctx, cancel := c.s.connection(ctx)
	defer cancel()
	ctx, cancel2 := context.WithTimeout(ctx, opTimeout)
	defer cancel2()
	r, err := c.s.cm.Publish(ctx, &paho.Publish{Topic: c.s.cfg.Campaign.AckTopic, QoS: 1, Retain: true, Payload: payload,
		Properties: &paho.PublishProperties{ContentType: "application/json"}})
	if err == nil && r != nil && r.ReasonCode >= 0x80 {
		err = &refusedError{code: r.ReasonCode}
	}
	if err != nil {
		c.mu.Lock()
		c.sent = false
		c.mu.Unlock()
		c.s.log.Warn("campaign acknowledgement not published; it is sent again at the next connection",
			"topic", c.s.cfg.Campaign.AckTopic, "err", err)
	}
}

// save writes the state file: a temporary file beside it, synced, then
// renamed over it, so that the file is the old state or the new one,
// whole, whenever the car stops.
func (c *campaigner) save(camp *campaign.Campaign, now time.Time) error {
	data, err := json.Marshal(campaignState{Version: camp.Version, AppliedAt: now.UTC(), Campaign: camp.Raw})
	if err != nil {
		return err
	}
	return writeAtomic(c.s.cfg.Campaign.State, append(data, '\n'))
}

// writeAtomic replaces name with data, whole or not at all.
func writeAtomic(name string, data []byte) error {
	dir := filepath.Dir(name)
	f, err := os.CreateTemp(dir, "."+filepath.Base(name)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if d, err := os.Open(dir); err == nil {
		err = d.Sync()
		d.Close()
		return err
	}
	return nil
}
