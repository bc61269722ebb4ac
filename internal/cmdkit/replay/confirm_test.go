package replay

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/yukart/candec/mqttclient"
)

// confirmer records which way each batch went and answers from a
// script: one error (or nil) per call, nil once the script runs out.
type confirmer struct {
	calls  []string
	answer []error
}

func (c *confirmer) next(how string) error {
	c.calls = append(c.calls, how)
	if len(c.answer) == 0 {
		return nil
	}
	err := c.answer[0]
	c.answer = c.answer[1:]
	return err
}

func (c *confirmer) Publish(context.Context, []byte) error { return c.next("publish") }
func (c *confirmer) Confirm(context.Context, []byte) error { return c.next("confirm") }

// TestRunConfirmed: batches go at QoS 1 until the broker acknowledges
// one, then at the publisher's QoS; a refusal ends the replay at once
// with the refusal (Run still sends the batch its window held, which the
// broker refuses again), and says nothing of failing; the notice of
// failing publishes comes once per run of failures.
func TestRunConfirmed(t *testing.T) {
	refused := fmt.Errorf("%w on yukart/can/raw: not authorized (PUBACK reason code 0x87)", mqttclient.ErrPublishRefused)
	away := errors.New("connection down")
	log := capLog(0, 20, 40, 60, 80, 100) // six batches of one frame
	for _, tc := range []struct {
		name    string
		answer  []error
		calls   []string
		failed  uint64
		notices int
		refusal bool
	}{
		{"confirmed at once", nil, []string{"confirm", "publish", "publish", "publish", "publish", "publish"}, 0, 0, false},
		{"confirmed after the broker came back", []error{away, away, nil}, []string{"confirm", "confirm", "confirm", "publish", "publish", "publish"}, 2, 1, false},
		{"failing twice", []error{nil, away, nil, away}, []string{"confirm", "publish", "publish", "publish", "publish", "publish"}, 2, 2, false},
		{"refused", []error{refused, refused}, []string{"confirm", "confirm"}, 2, 0, true},
		{"refused after a failure", []error{away, refused, refused}, []string{"confirm", "confirm", "confirm"}, 3, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pub := &confirmer{answer: tc.answer}
			var notices []error
			opts := Options{Clock: &fakeClock{now: time.Unix(1_800_000_000, 0)}}
			st, err := RunConfirmed(context.Background(), opener(log), pub, opts, func(err error) { notices = append(notices, err) })
			if !reflect.DeepEqual(pub.calls, tc.calls) {
				t.Errorf("calls %q, want %q", pub.calls, tc.calls)
			}
			if st.Failed != tc.failed || len(notices) != tc.notices {
				t.Errorf("%d failed, %d notices %v; want %d, %d", st.Failed, len(notices), notices, tc.failed, tc.notices)
			}
			if tc.refusal != errors.Is(err, mqttclient.ErrPublishRefused) || (!tc.refusal && err != nil) {
				t.Errorf("got error %v, want a refusal: %v", err, tc.refusal)
			}
		})
	}
}
