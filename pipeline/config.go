package pipeline

import (
	"fmt"
	"time"

	"github.com/yukart/candec/envelope"
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
)

// Config configures an Engine. The zero value is usable: the default
// topic template, JSON, the built-in default policy, no window stream,
// epoch 0.
type Config struct {
	// TopicTemplate names a signal's topic. {signal} is the signal's
	// name, {message} its message's name and {bus} the bus ("can0" for
	// Bus 0). Default DefaultTopicTemplate.
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
	if c.TopicTemplate == "" {
		c.TopicTemplate = DefaultTopicTemplate
	}
	if c.Policies == nil {
		c.Policies = DefaultPolicy()
	}
	if c.Window != nil {
		w := *c.Window
		if w.Topic == "" {
			w.Topic = DefaultWindowTopic
		}
		if w.Period == 0 {
			w.Period = DefaultWindowPeriod
		}
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
