package service

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// NewLogger returns the logger the config asks for: text or JSON lines at
// the given level, written to w.
func NewLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	lv, err := parseLevel(level)
	if err != nil {
		return nil, err
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("%w: log format must be text or json, got %q", ErrConfig, format)
}

func parseLevel(s string) (slog.Level, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(strings.ToLower(s))); err != nil {
		return 0, fmt.Errorf("must be debug, info, warn or error, got %q", s)
	}
	return lv, nil
}

// rateLimit lets one log line through per period and counts the ones it
// held back, so that a flood of bad batches costs a line every few
// seconds, not one per batch.
type rateLimit struct {
	period     time.Duration
	last       time.Time
	suppressed int
}

// allow reports whether to log at now, and how many lines were held back
// since the last one.
func (r *rateLimit) allow(now time.Time) (ok bool, suppressed int) {
	if !r.last.IsZero() && now.Sub(r.last) < r.period {
		r.suppressed++
		return false, 0
	}
	r.last = now
	s := r.suppressed
	r.suppressed = 0
	return true, s
}

// lockedLimit is a rateLimit for callbacks that run on several
// goroutines.
type lockedLimit struct {
	mu sync.Mutex
	rateLimit
}

func (l *lockedLimit) allow(now time.Time) (ok bool, suppressed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rateLimit.allow(now)
}
