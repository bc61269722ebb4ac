package rollout

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/yukart/candec/campaign"
	"github.com/yukart/candec/internal/base/defaults"
	"github.com/yukart/candec/internal/base/termtext"
	"github.com/yukart/candec/mqttclient"
)

// Defaults of Config: the topics of deploy/mosquitto (bridge.conf,
// fleet.acl), where "+" is the vehicle.
const (
	DefaultPolicyTopic = "fleet/+/yukart/policy"
	DefaultAckTopic    = "fleet/+/yukart/decoder/campaign"
	DefaultFenceTopic  = "fleet/campaigns/fence"
	DefaultTimeout     = 10 * time.Second
)

// Config says where the fleet's campaigns are.
type Config struct {
	// Settings reach the fleet's broker.
	Settings mqttclient.Settings
	// PolicyTopic and AckTopic are the cars' topics, each with one "+"
	// level for the vehicle id.
	PolicyTopic, AckTopic string
	// FenceTopic is a topic the user may write and read, which no car
	// writes: Read's mark that every retained message has come.
	FenceTopic string
	// Timeout bounds the connection and each step.
	Timeout time.Duration
	// Protocol is the MQTT version spoken: MQTT5 (the default, through
	// paho) or MQTT311 (the NATS cluster's nodes speak only 3.1.1).
	Protocol Protocol
}

// Protocol is an MQTT version rollout speaks.
type Protocol int

// The protocols.
const (
	MQTT5   Protocol = iota // MQTT 5, through paho (package mqttclient)
	MQTT311                 // MQTT 3.1.1, through package mqtt311
)

// ErrProtocol: a protocol name ParseProtocol does not know.
var ErrProtocol = errors.New(`rollout: want MQTT version "5" or "3.1.1"`)

// ParseProtocol reads a protocol's name: "5" or "3.1.1", as String
// writes it.
func ParseProtocol(s string) (Protocol, error) {
	switch s {
	case "5":
		return MQTT5, nil
	case "3.1.1":
		return MQTT311, nil
	}
	return 0, fmt.Errorf("%w, got %q", ErrProtocol, s)
}

// String is the protocol's name.
func (p Protocol) String() string {
	if p == MQTT311 {
		return "3.1.1"
	}
	return "5"
}

func (c Config) withDefaults() Config {
	c.PolicyTopic = cmp.Or(c.PolicyTopic, DefaultPolicyTopic)
	c.AckTopic = cmp.Or(c.AckTopic, DefaultAckTopic)
	c.FenceTopic = cmp.Or(c.FenceTopic, DefaultFenceTopic)
	c.Timeout = defaults.Positive(c.Timeout, DefaultTimeout)
	return c
}

// Car is what the broker holds of one car.
type Car struct {
	Vehicle string
	// Pushed is the campaign on its policy topic (its signature not
	// checked: the car does that), nil when none.
	Pushed *campaign.Body
	// Ack is its acknowledgement, nil when it sent none (campaigns off,
	// or never connected since they were on).
	Ack *campaign.Ack
	// Bad says what was wrong with a retained message that could not
	// be read.
	Bad string
}

// ErrFence: the fence did not come back in time.
var ErrFence = errors.New("rollout: the broker did not send the fence back (may the user write and read the fence topic?)")

// link is a connection to the fleet's broker in one protocol: all
// session needs of it.
type link interface {
	// subscribe subscribes at QoS 0 and returns once the broker
	// granted every filter, or says which it refused.
	subscribe(ctx context.Context, filters ...string) error
	// publish publishes at QoS 1 and returns at the broker's
	// acknowledgement; contentType is MQTT 5's, which 3.1.1 lacks.
	publish(ctx context.Context, topic string, payload []byte, retain bool, contentType string) error
	close()
}

// session is one connection to the fleet's broker.
type session struct {
	cfg   Config
	link  link
	fence string // the payload Read waits for

	mu    sync.Mutex
	cars  map[string]*Car
	saw   chan struct{} // closed when the fence came back
	fired bool
}

func connect(ctx context.Context, cfg Config) (*session, error) {
	cfg = cfg.withDefaults()
	s := &session{cfg: cfg, cars: map[string]*Car{}, saw: make(chan struct{}),
		fence: "fence " + strconv.FormatInt(time.Now().UnixNano(), 10)}
	var err error
	if cfg.Protocol == MQTT311 {
		s.link, err = dial311(ctx, cfg, s.receive)
	} else {
		s.link, err = dial5(ctx, cfg, func(p *paho.Publish) { s.receive(p.Topic, p.Payload) })
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *session) close() { s.link.close() }

func (s *session) car(id string) *Car {
	c := s.cars[id]
	if c == nil {
		c = &Car{Vehicle: id}
		s.cars[id] = c
	}
	return c
}

// receive runs on the client's one receiving goroutine, in the order
// the broker sent.
// payload is read before it returns (package mqtt311 reuses it).
func (s *session) receive(topic string, payload []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if topic == s.cfg.FenceTopic {
		if string(payload) == s.fence && !s.fired {
			s.fired = true
			close(s.saw)
		}
		return
	}
	if id, ok := campaign.VehicleOf(s.cfg.AckTopic, topic); ok {
		c := s.car(id)
		a, err := campaign.ParseAck(payload)
		switch {
		case err != nil:
			c.Bad = err.Error()
		case a.Vehicle != id:
			c.Bad = fmt.Sprintf("acknowledgement of vehicle %q on %s", a.Vehicle, topic)
		default:
			c.Ack = &a
		}
		return
	}
	if id, ok := campaign.VehicleOf(s.cfg.PolicyTopic, topic); ok {
		c := s.car(id)
		if len(payload) == 0 {
			return // a cleared topic
		}
		b, err := campaign.Peek(payload)
		if err != nil {
			c.Bad = "pushed: " + err.Error()
			return
		}
		c.Pushed = &b
	}
}

// read subscribes to the retained topics and waits for the fence.
func (s *session) read(ctx context.Context) ([]Car, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	if err := s.link.subscribe(ctx, s.cfg.AckTopic, s.cfg.PolicyTopic, s.cfg.FenceTopic); err != nil {
		return nil, fmt.Errorf("rollout: subscribe: %w", err)
	}
	if err := s.link.publish(ctx, s.cfg.FenceTopic, []byte(s.fence), false, ""); err != nil {
		return nil, fmt.Errorf("rollout: publish the fence on %s: %w", s.cfg.FenceTopic, err)
	}
	select {
	case <-s.saw:
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %s within %v", ErrFence, s.cfg.FenceTopic, s.cfg.Timeout)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Car, 0, len(s.cars))
	for _, c := range s.cars {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b Car) int {
		switch {
		case a.Vehicle < b.Vehicle:
			return -1
		case a.Vehicle > b.Vehicle:
			return 1
		}
		return 0
	})
	return out, nil
}

// Read returns every car the broker holds a retained acknowledgement or
// campaign of, by vehicle id, those matching glob ("" for all).
func Read(ctx context.Context, cfg Config, glob string) ([]Car, error) {
	if _, err := path.Match(glob, ""); err != nil {
		return nil, fmt.Errorf("rollout: vehicles %q: %w", glob, err)
	}
	s, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer s.close()
	cars, err := s.read(ctx)
	if err != nil || glob == "" {
		return cars, err
	}
	return slices.DeleteFunc(cars, func(c Car) bool {
		ok, _ := path.Match(glob, c.Vehicle)
		return !ok
	}), nil
}

// Pushed is one car a campaign went to.
type Pushed struct {
	Vehicle, Topic string
}

// Push publishes the signed campaign payload, retained at QoS 1, on the
// policy topic of each car it is for: the cars the broker knows (Read)
// and the vehicles named, whose id its glob matches. It returns them in
// order, each acknowledged by the broker; the first refusal ends it.
func Push(ctx context.Context, cfg Config, payload []byte, vehicles []string) ([]Pushed, error) {
	body, err := campaign.Peek(payload)
	if err != nil {
		return nil, err
	}
	s, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer s.close()
	cars, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	ids := slices.Clone(vehicles)
	for _, c := range cars {
		ids = append(ids, c.Vehicle)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var out []Pushed
	for _, id := range ids {
		if ok, _ := path.Match(body.Vehicles, id); !ok || !campaign.ValidVehicle(id) {
			continue
		}
		topic := campaign.Topic(s.cfg.PolicyTopic, id)
		pctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
		err := s.link.publish(pctx, topic, payload, true, "application/json")
		cancel()
		if err != nil {
			return out, fmt.Errorf("rollout: push to %s: %w", topic, err)
		}
		out = append(out, Pushed{Vehicle: id, Topic: topic})
	}
	return out, nil
}

// WriteStatus writes cars as a table, a line each: the vehicle, the
// version pushed to it, the version it runs and its policy's hash and
// time, and what became of the last campaign it took.
func WriteStatus(w io.Writer, cars []Car) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "VEHICLE\tPUSHED\tAPPLIED\tPOLICY\tAPPLIED AT\tLAST")
	for _, c := range cars {
		pushed, applied, hash, at, last := "-", "-", "-", "-", "no acknowledgement"
		if c.Pushed != nil {
			pushed = strconv.FormatUint(c.Pushed.Version, 10)
		}
		if a := c.Ack; a != nil {
			applied, last = strconv.FormatUint(a.Applied.Version, 10), "-"
			if a.Applied.Version == 0 {
				hash = "(policy file)"
			} else {
				hash = shortHash(a.Applied.Hash)
				at = a.Applied.At.UTC().Format(time.RFC3339)
			}
			if o := a.Last; o != nil {
				last = fmt.Sprintf("%s version %d", o.Result, o.Version)
				if o.Reason != "" {
					last += " (" + string(o.Reason) + ")"
				}
				if o.Detail != "" {
					last += ": " + o.Detail
				}
			}
		}
		if c.Bad != "" {
			last = "unreadable: " + c.Bad
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", termtext.Clean(c.Vehicle), pushed, applied, termtext.Clean(hash), at, termtext.Clean(last))
	}
	return tw.Flush()
}

// shortHash is a policy hash's first 12 hex digits.
func shortHash(h string) string {
	h = strings.TrimPrefix(h, "sha256:")
	if len(h) > 12 {
		h = h[:12]
	}
	return h
}
