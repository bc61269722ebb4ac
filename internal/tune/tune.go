package tune

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/internal/base/defaults"
	"github.com/yukart/candec/pipeline"
)

// Errors.
var (
	// ErrEmpty: the capture holds no frame.
	ErrEmpty = errors.New("tune: capture holds no frame")
	// ErrConfig is wrapped by errors in a Config.
	ErrConfig = errors.New("tune: bad config")
	// ErrReceived: Config.Received is not what the run published.
	ErrReceived = errors.New("tune: received envelopes differ from the run's")
)

// DefaultSubscribers is the number of all-signal subscribers the report
// assumes (svc-gw, recorder, svc-nav, svc-vision, telemetry-gw).
const DefaultSubscribers = 5

// Config says what to analyse.
type Config struct {
	// DB is the database; Policy the policy (nil: the default policy).
	DB     *dbc.Database
	Policy *pipeline.PolicyFile
	// Subscribers is how many subscribers take every signal; 0 means
	// DefaultSubscribers, a negative number is an error.
	Subscribers int
	// TopicTemplate names the topics, as the service's topic_template
	// and decode --policy's --topic-template ("" for the default); a DBC
	// that repeats signal names in several messages needs {message}.
	TopicTemplate string
	// Window adds the window stream, to compare its deliveries.
	Window bool
	// Tail lets time run on this long after the last frame, as
	// pipeline.OfflineOptions.Tail: for comparing with a live run that
	// went on after its last frame.
	Tail time.Duration
	// Received, if not nil, is what a subscriber received, per topic in
	// order: the fidelity is then computed from these envelopes' values
	// in place of the engine's, the engine giving only when each was
	// published (an envelope carries no publish time). Each must be the
	// engine's envelope of the same seq, or Analyze fails.
	Received map[string][]envelope.Envelope
}

// Signal is one signal's cost.
type Signal struct {
	// Name is "<message>.<signal>"; Topic its topic.
	Name  string `json:"signal"`
	Topic string `json:"topic"`
	// FramesPerS is how often a frame carried a value of the signal.
	FramesPerS float64 `json:"frames_per_s"`
	// ChangesPerS is how often that value differed from the previous one.
	ChangesPerS float64 `json:"changes_per_s"`
	// EnvelopesPerS is what the policy publishes, every kind counted
	// (values, trailing values, heartbeats, stale marks).
	EnvelopesPerS float64 `json:"envelopes_per_s"`
	// Share is the signal's part of all envelopes, in percent.
	Share float64 `json:"share_pct"`
	// Policy summarises the signal's resolved policy.
	Policy string `json:"policy"`
	// Housekeeping says the signal is a checksum or a rolling counter,
	// and how that was told (HousekeepingName, HousekeepingBehaviour):
	// its figures are reported but not in the totals.
	Housekeeping string `json:"housekeeping,omitempty"`
	// Fidelity is how far what a subscriber sees is from the bus.
	Fidelity Fidelity `json:"fidelity"`
}

// Report is the result of Analyze.
type Report struct {
	// Frames and Duration describe the capture (first to last frame).
	Frames   uint64        `json:"frames"`
	Duration time.Duration `json:"-"`
	// DurationS is Duration in seconds.
	DurationS  float64 `json:"duration_s"`
	FramesPerS float64 `json:"frames_per_s"`
	// Unknown counts frames whose ID is not in the database.
	Unknown uint64 `json:"unknown_frames"`
	// Late, Future, Past and Discontinuities are the clock's counts (see
	// pipeline.Stats): frames behind the clock run at its time, frames
	// with implausible timestamps dropped, new timebases adopted. The
	// duration leaves the steps of discontinuities out.
	Late            uint64 `json:"late_frames"`
	Future          uint64 `json:"future_frames_dropped"`
	Past            uint64 `json:"past_frames_dropped"`
	Discontinuities uint64 `json:"discontinuities"`
	// EnvelopesPerS and DeliveriesPerS are the totals: envelopes
	// published, and delivered to Subscribers all-signal subscribers.
	EnvelopesPerS  float64 `json:"envelopes_per_s"`
	DeliveriesPerS float64 `json:"deliveries_per_s"`
	// Envelopes counts them (Tail included).
	Envelopes   uint64 `json:"envelopes"`
	Subscribers int    `json:"subscribers"`
	// WindowsPerS is the window stream's messages per second, and
	// WindowDeliveriesPerS their deliveries, when Config.Window is set.
	WindowsPerS          float64 `json:"windows_per_s,omitempty"`
	WindowDeliveriesPerS float64 `json:"window_deliveries_per_s,omitempty"`
	// ValuesPerS is what a decoder without a policy would publish: an
	// envelope for every decoded value of every signal, uncapped. It is
	// the "before" the policy's EnvelopesPerS is compared with.
	ValuesPerS float64 `json:"values_per_s"`
	// ByKind counts envelopes per second by why they were published.
	ByKind map[string]float64 `json:"envelopes_per_s_by_kind"`
	// TotalError is the sum over the published signals of their
	// time-weighted RMS error as a fraction of their range
	// (Fidelity.RMSRange): the figure the optimizer makes small.
	// Missed counts the transitions of states no envelope carried, and
	// MissedEnum those of value-table signals among them. Housekeeping
	// signals (Signal.Housekeeping) are left out of all three.
	TotalError float64 `json:"total_error"`
	Missed     uint64  `json:"missed_transitions"`
	MissedEnum uint64  `json:"missed_enum_transitions"`
	// Signals are the published signals, costliest first.
	Signals []Signal `json:"signals"`
	// Unpublished are the signals the policy leaves out that frames
	// carried, most frequent first: a decoder without a policy would
	// have published them too.
	Unpublished []Signal `json:"unpublished_signals,omitempty"`
}

// Analyze runs every frame of src through the pipeline engine, as
// decode --policy does (pipeline.RunOffline), and returns the costs.
func Analyze(src capture.Source, cfg Config) (*Report, error) {
	return analyze(src, cfg, nil)
}

// analyze is Analyze of src; obs, if not nil, is what was observed of
// every signal of src (a Recording's), else the run observes it.
func analyze(src pipeline.Source, cfg Config, obs []spread) (*Report, error) {
	if cfg.Subscribers < 0 {
		return nil, fmt.Errorf("%w: subscribers must be 0 (the default, %d) or more, got %d", ErrConfig, DefaultSubscribers, cfg.Subscribers)
	}
	cfg.Subscribers = cmp.Or(cfg.Subscribers, DefaultSubscribers)
	c, err := count(src, cfg, obs)
	if err != nil {
		return nil, err
	}
	frames := uint64(c.res.Frames)
	// The clock's span, not the frames' extremes: a frame with an
	// implausible timestamp does not lengthen it.
	dur := c.res.Span

	secs := defaults.Positive(dur.Seconds(), 1) // one instant: report counts as per second
	st := c.eng.Stats()
	rep := &Report{
		Frames:     frames,
		Duration:   dur,
		DurationS:  dur.Seconds(),
		FramesPerS: float64(frames) / secs,
		Unknown:    st.Unknown,

		Late:            st.Late,
		Future:          st.Future,
		Past:            st.Past,
		Discontinuities: st.Discontinuities,
		Subscribers:     cfg.Subscribers,
		ByKind:          map[string]float64{},
	}
	for _, k := range pipeline.Kinds() {
		if n := st.Published(k); n > 0 && k != pipeline.KindWindow {
			rep.ByKind[k.String()] = float64(n) / secs
		}
	}
	total, values := c.signalRates(rep, cfg.DB, secs)
	rep.Envelopes = total
	rep.EnvelopesPerS = float64(total) / secs
	rep.ValuesPerS = float64(values) / secs
	rep.DeliveriesPerS = rep.EnvelopesPerS * float64(cfg.Subscribers)
	if cfg.Window {
		rep.WindowsPerS = float64(c.tr.windows) / secs
		rep.WindowDeliveriesPerS = rep.WindowsPerS * float64(cfg.Subscribers)
	}
	for i := range rep.Signals {
		if total > 0 {
			rep.Signals[i].Share = rep.Signals[i].EnvelopesPerS / rep.EnvelopesPerS * 100
		}
		if rep.Signals[i].Housekeeping != "" {
			continue
		}
		rep.TotalError += rep.Signals[i].Fidelity.RMSRange
		rep.Missed += rep.Signals[i].Fidelity.Missed
		if rep.Signals[i].Fidelity.Enum {
			rep.MissedEnum += rep.Signals[i].Fidelity.Missed
		}
	}
	sort.SliceStable(rep.Signals, func(i, j int) bool { return rep.Signals[i].EnvelopesPerS > rep.Signals[j].EnvelopesPerS })
	sort.SliceStable(rep.Unpublished, func(i, j int) bool { return rep.Unpublished[i].FramesPerS > rep.Unpublished[j].FramesPerS })
	return rep, nil
}

// counts are what a capture's run through the pipeline gave: the
// engine, the run's result, and the tracker's counts and fidelity.
type counts struct {
	eng *pipeline.Engine
	res pipeline.OfflineResult
	tr  *tracker
}

// count runs src through a pipeline under cfg's policy (the default
// without one), counting what each signal is sent and published, and
// how far what it publishes is from what it is sent.
func count(src pipeline.Source, cfg Config, obs []spread) (*counts, error) {
	pol := cfg.Policy
	if pol == nil {
		pol = pipeline.DefaultPolicy()
	}
	c := &counts{tr: newTracker(src, decoder.New(cfg.DB), len(cfg.DB.Signals), obs)}
	// Msgpack: the same envelopes as JSON's (the tracker reads the
	// values, not the payload), for less formatting.
	pcfg := pipeline.Config{Policies: pol, TopicTemplate: cfg.TopicTemplate, Encoding: envelope.Msgpack}
	if cfg.Window {
		pcfg.Window = &pipeline.WindowConfig{}
	}
	eng, err := pipeline.New(cfg.DB, pcfg, c.tr)
	if err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	c.eng = eng
	c.tr.start(eng, cfg.DB)
	c.tr.received = cfg.Received
	if c.res, err = pipeline.RunOffline(context.Background(), c.tr, eng, pipeline.OfflineOptions{Tail: cfg.Tail}); err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	if c.res.Frames == 0 {
		return nil, ErrEmpty
	}
	c.tr.finish(c.res.End)
	if err := c.tr.receivedAll(); err != nil {
		return nil, err
	}
	return c, nil
}

// signalRates adds each signal of db to rep, as published or (when
// seen) unpublished, with its rates over secs; it returns the envelopes
// published and the values seen in all.
func (c *counts) signalRates(rep *Report, db *dbc.Database, secs float64) (total, values uint64) {
	seen, changes, envelopes := c.tr.seen, c.tr.changes, c.tr.envelopes
	for _, s := range db.Signals {
		values += seen[s.Index]
		p := c.eng.Policy(s)
		hk := housekeepingOf(s, c.tr.steps[s.Index])
		if !p.Publish {
			if seen[s.Index] > 0 {
				rep.Unpublished = append(rep.Unpublished, Signal{
					Name:         s.FullName(),
					FramesPerS:   float64(seen[s.Index]) / secs,
					ChangesPerS:  float64(changes[s.Index]) / secs,
					Policy:       p.Describe(),
					Housekeeping: hk,
				})
			}
			continue
		}
		topic := c.eng.Topic(s)
		total += envelopes[s.Index]
		fid := c.tr.fid[s.Index].result(s, secs, &c.tr.obs[s.Index])
		rep.Signals = append(rep.Signals, Signal{
			Name:          s.FullName(),
			Topic:         topic,
			FramesPerS:    float64(seen[s.Index]) / secs,
			ChangesPerS:   float64(changes[s.Index]) / secs,
			EnvelopesPerS: float64(envelopes[s.Index]) / secs,
			Policy:        p.Describe(),
			Housekeeping:  hk,
			Fidelity:      fid,
		})
	}
	return total, values
}
