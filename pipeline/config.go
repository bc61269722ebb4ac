package pipeline

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/yukart/candec/envelope"
)

// Errors of the pipeline package.
var (
	// ErrConfig is wrapped by errors in a Config.
	ErrConfig = errors.New("pipeline: bad config")
	// ErrTopic is wrapped by errors in a topic or topic template.
	ErrTopic = errors.New("pipeline: bad topic")
	// ErrPolicy is wrapped by every *PolicyError.
	ErrPolicy = errors.New("pipeline: bad policy")
)

// Defaults filled in by New.
const (
	// DefaultTopicTemplate names one topic per signal.
	DefaultTopicTemplate = "yukart/vehicle/{signal}"
	// DefaultWindowTopic is the window stream's topic, outside the
	// per-signal wildcard.
	DefaultWindowTopic = "yukart/window"
	// DefaultWindowPeriod is the window stream's window, in frame time.
	DefaultWindowPeriod = 10 * time.Millisecond
	// DefaultMaxClockJump is how far a frame's time may be from the
	// engine's clock and still be taken as on the same timebase. It is
	// far above the delivery delays and pauses of a live stream, where
	// the service's clock runs on while frames stop, and far below any
	// clock step worth noticing.
	DefaultMaxClockJump = 10 * time.Second
	// DefaultClockConfirm is how many frames in a row must agree on a
	// new timebase before the engine adopts it.
	DefaultClockConfirm = 32
	// MaxClockConfirm bounds ClockConfirm: the engine holds that many
	// frames while it waits for the confirmation.
	MaxClockConfirm = 4096
)

// Config configures an Engine. The zero value is usable: the default
// topic template, JSON, the built-in default policy, no window stream,
// epoch 0.
type Config struct {
	// TopicTemplate names a signal's topic. {signal} is the signal's
	// name, {message} its message's name, {bus} the bus ("can0" for
	// Bus 0) and {sa} the source address of a J1939 message ("00" to
	// "FF"; "na" for other messages), which gives it a topic, and a
	// state, per source (see "J1939 sources" in the package
	// documentation). Default DefaultTopicTemplate.
	TopicTemplate string
	// Bus is the bus this engine's database serves; it only fills {bus}.
	Bus uint8
	// Encoding of the envelopes; JSON by default.
	Encoding envelope.Encoding
	// Policies are the signal policies; nil means DefaultPolicy().
	Policies *PolicyFile
	// Window enables the window stream when non-nil.
	Window *WindowConfig
	// Epoch is written into every envelope and window. A publisher sets
	// it to something new at each start (its start time in ns since the
	// Unix epoch is the convention) so that subscribers can tell a
	// restart of seq from loss.
	Epoch uint64
	// MaxClockJump is the largest distance between a frame's time and
	// the engine's clock that is taken as the same timebase (see "Clock
	// jumps" in the package documentation). Default DefaultMaxClockJump.
	MaxClockJump time.Duration
	// ClockConfirm is how many frames in a row, each within MaxClockJump
	// of the newest of them and all beyond MaxClockJump from the clock,
	// make a new timebase. Default DefaultClockConfirm; at most
	// MaxClockConfirm.
	ClockConfirm int
}

// WindowConfig configures the window stream: every envelope published
// during one window of frame time, in one message on one topic.
type WindowConfig struct {
	// Topic of the window stream; default DefaultWindowTopic.
	Topic string
	// Period is the window length in frame time; default
	// DefaultWindowPeriod.
	Period time.Duration
}

// withDefaults returns c with defaults filled in.
func (c Config) withDefaults() Config {
	c.TopicTemplate = cmp.Or(c.TopicTemplate, DefaultTopicTemplate)
	if c.Policies == nil {
		c.Policies = DefaultPolicy()
	}
	c.MaxClockJump = cmp.Or(c.MaxClockJump, DefaultMaxClockJump)
	c.ClockConfirm = cmp.Or(c.ClockConfirm, DefaultClockConfirm)
	if c.Window != nil {
		w := *c.Window
		w.Topic = cmp.Or(w.Topic, DefaultWindowTopic)
		w.Period = cmp.Or(w.Period, DefaultWindowPeriod)
		c.Window = &w
	}
	return c
}

// Validate reports a config that New would refuse (topic collisions are
// found by New, which knows the database).
func (c Config) Validate() error {
	c = c.withDefaults()
	if c.Encoding != envelope.JSON && c.Encoding != envelope.Msgpack {
		return fmt.Errorf("%w: unknown encoding %d", ErrConfig, c.Encoding)
	}
	if err := checkTemplate(c.TopicTemplate); err != nil {
		return err
	}
	if c.MaxClockJump < 0 {
		return fmt.Errorf("%w: max clock jump %s is negative", ErrConfig, c.MaxClockJump)
	}
	if c.ClockConfirm < 1 || c.ClockConfirm > MaxClockConfirm {
		return fmt.Errorf("%w: clock confirm %d frames is out of range (1–%d)", ErrConfig, c.ClockConfirm, MaxClockConfirm)
	}
	if c.Window != nil {
		if c.Window.Period < 0 {
			return fmt.Errorf("%w: window period %s is negative", ErrConfig, c.Window.Period)
		}
		if err := checkTopic(c.Window.Topic); err != nil {
			return fmt.Errorf("%w: window topic: %w", ErrConfig, err)
		}
	}
	return nil
}
