package ingest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestAnswered: a setup request the cluster did not answer (an
// attempt's deadline, no responders, a 5xx answer) is sent again until
// it is answered; any other answer returns at once, and the caller's
// context bounds the attempts.
func TestAnswered(t *testing.T) {
	notFound := &jetstream.APIError{Code: 404, ErrorCode: jetstream.JSErrCodeStreamNotFound, Description: "stream not found"}
	unavailable := &jetstream.APIError{Code: 503, Description: "JetStream system temporarily unavailable"}
	badName := errors.New("nats: invalid stream name")
	for _, tc := range []struct {
		name  string
		fails []error // the attempts' errors before one succeeds
		calls int
		want  error
	}{
		{"answered at once", nil, 1, nil},
		{"no responders, then answered", []error{nats.ErrNoResponders, nats.ErrNoResponders}, 3, nil},
		{"unavailable, then answered", []error{unavailable}, 2, nil},
		{"an attempt timed out, then answered", []error{context.DeadlineExceeded}, 2, nil},
		{"not found", []error{notFound}, 1, notFound},
		{"a client's error", []error{badName}, 1, badName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := answered(context.Background(), func(ctx context.Context) error {
				if _, ok := ctx.Deadline(); !ok {
					t.Error("an attempt without a deadline")
				}
				calls++
				if calls <= len(tc.fails) {
					return tc.fails[calls-1]
				}
				return nil
			})
			if calls != tc.calls || !errors.Is(err, tc.want) {
				t.Errorf("%d calls, err %v; want %d, %v", calls, err, tc.calls, tc.want)
			}
		})
	}
	t.Run("the caller's context ends", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		calls := 0
		err := answered(ctx, func(context.Context) error { calls++; return nats.ErrNoResponders })
		if !errors.Is(err, nats.ErrNoResponders) || calls < 2 || ctx.Err() == nil {
			t.Errorf("%d calls, err %v, ctx %v; want several calls, no responders, ctx done", calls, err, ctx.Err())
		}
	})
}
