package replay

import (
	"context"
	"errors"

	"github.com/yukart/candec/mqttclient"
)

// Confirmer is a Publisher that can also send one batch at QoS 1 and
// learn from the broker's acknowledgement whether it may publish:
// mqttclient.Publisher.
type Confirmer interface {
	Publisher
	Confirm(ctx context.Context, batch []byte) error
}

// RunConfirmed is Run for a publisher at QoS 0, which a broker drops
// without a word when the user may not write the topic. Until a batch
// is acknowledged, each goes through pub.Confirm, at QoS 1, whose PUBACK
// says whether the broker takes it; then through pub.Publish. A refusal
// (an error wrapping mqttclient.ErrPublishRefused) is final: the replay
// ends at once, and RunConfirmed returns its stats and the refusal.
// Other failures are counted as Run counts them, and the replay goes on.
//
// failing, when not nil, is called with the error of a publish that
// fails after one that did not (or of the first one): to say at once
// that the broker went away, not only at the end of a long or looping
// replay. It is not called for a refusal, which ends the replay.
func RunConfirmed(ctx context.Context, open Opener, pub Confirmer, opts Options, failing func(error)) (Stats, error) {
	runCtx, refuse := context.WithCancelCause(ctx)
	defer refuse(nil)
	c := &confirming{pub: pub, refuse: refuse, notify: failing}
	st, err := Run(runCtx, open, c, opts)
	if cause := context.Cause(runCtx); errors.Is(cause, mqttclient.ErrPublishRefused) {
		return st, cause
	}
	return st, err
}

// confirming is RunConfirmed's publisher.
type confirming struct {
	pub       Confirmer
	refuse    context.CancelCauseFunc
	notify    func(error)
	confirmed bool
	failing   bool
}

func (c *confirming) Publish(ctx context.Context, batch []byte) error {
	var err error
	if c.confirmed {
		err = c.pub.Publish(ctx, batch)
	} else if err = c.pub.Confirm(ctx, batch); errors.Is(err, mqttclient.ErrPublishRefused) {
		c.refuse(err)
		return err
	} else {
		c.confirmed = err == nil
	}
	if err != nil && !c.failing && c.notify != nil {
		c.notify(err)
	}
	c.failing = err != nil
	return err
}
