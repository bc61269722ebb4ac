package fleet

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/internal/fleet/mqtt311"
	"github.com/yukart/candec/internal/lab/latency"
	"github.com/yukart/candec/mqttclient"
)

// sampledCars is how many cars' windows the sampler subscribes to: a
// few, so that it adds little to the broker's load.
const sampledCars = 5

// sampler takes the delivery latency of a few cars' windows: arrival at
// a subscriber of the broker less the window's end.
type sampler struct {
	conn *mqtt311.Client
	mu   sync.Mutex
	h    latency.Histogram
	// done holds the parts of the window before the last split.
	done latency.Histogram
	w    envelope.Window
	// offset is added to a window's end: the drives started that much
	// later than they were made for. Set before the drives start.
	offset int64
}

func newSampler(ctx context.Context, broker string, cars []Car) (*sampler, error) {
	s := &sampler{}
	conn, err := mqtt311.Dial(ctx, mqttclient.Settings{Broker: broker, ClientID: "fleet-sampler"}, s.take)
	if err != nil {
		return nil, fmt.Errorf("fleet: sampler: %w", err)
	}
	s.conn = conn
	var filters []string
	for i := range min(sampledCars, len(cars)) {
		filters = append(filters, "fleet/"+cars[i].ID+"/yukart/window")
	}
	if err := conn.Subscribe(ctx, filters...); err != nil {
		conn.Close()
		return nil, fmt.Errorf("fleet: sampler: %w", err)
	}
	return s, nil
}

func (s *sampler) take(_, payload []byte, now int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if envelope.ParseWindow(payload, &s.w) == nil {
		s.h.Record(now - s.w.End - s.offset)
	}
}

// reset forgets what was taken so far: the warm-up.
func (s *sampler) reset() {
	s.mu.Lock()
	s.h.Reset()
	s.done.Reset()
	s.mu.Unlock()
}

// quantiles returns the quantiles of everything taken since reset.
func (s *sampler) quantiles() (p50, p99 time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := s.done
	all.Merge(&s.h)
	return all.Quantile(0.5), all.Quantile(0.99)
}

// split returns the quantiles of what was taken since the last split
// (or reset) and starts the next part: a campaign's before and after.
func (s *sampler) split() (p50, p99 time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p50, p99 = s.h.Quantile(0.5), s.h.Quantile(0.99)
	s.done.Merge(&s.h)
	s.h.Reset()
	return p50, p99
}

func (s *sampler) close() { _ = s.conn.Close() }
