package fleet

import (
	"bytes"
	"testing"
	"time"

	"github.com/yukart/candec/pipeline"
)

// liveConfig is the cars' config of testCars, with the drive of every
// car made live from 1 s on.
func liveConfig(t *testing.T, drive time.Duration) CarConfig {
	cfg := testCarConfig(t, drive, 1_800_000_000_000_000_000)
	cfg.LiveFrom, cfg.Live = time.Second, func(string) bool { return true }
	return cfg
}

// TestLiveDrive: a car whose drive is made step by step during the run
// publishes exactly the windows of the drive made before the run, and
// one that applies a campaign's policy mid-drive goes on with the next
// seq: up to the switch its windows are the same, the window open at
// the switch goes out then under the old version, and every window
// after it carries the new version and the new policy's values (here
// at most one a second per signal, against the default's twenty).
func TestLiveDrive(t *testing.T) {
	const drive = 4 * time.Second
	cfg := liveConfig(t, drive)
	made := cfg
	made.LiveFrom = 0
	want, err := NewCar(made, 0)
	if err != nil {
		t.Fatal(err)
	}
	step := func(c *Car, to time.Duration) {
		for at := cfg.LiveFrom; at < to; at += 10 * time.Millisecond {
			c.live.runTo(c.Start + int64(at))
		}
		c.Windows = c.live.windows
	}
	c, err := NewCar(cfg, 0)
	if err != nil || c.live == nil {
		t.Fatalf("NewCar: %v, live %v", err, c.live != nil)
	}
	step(&c, drive)
	c.live.finish()
	c.Windows = c.live.windows
	if len(c.Windows) != len(want.Windows) {
		t.Fatalf("live: %d windows, made before: %d", len(c.Windows), len(want.Windows))
	}
	for i := range c.Windows {
		if g, w := c.Windows[i], want.Windows[i]; g.At != w.At || !bytes.Equal(g.Payload, w.Payload) {
			t.Fatalf("window %d: live at %v %s, made before at %v %s", i, g.At, g.Payload, w.At, w.Payload)
		}
	}

	p, err := pipeline.ParsePolicy("test", []byte("defaults:\n  max_rate: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	c, err = NewCar(cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	cut := 2*time.Second + 5*time.Millisecond // within a window
	step(&c, cut)
	if err := c.live.apply(c.Start+int64(cut), 7, p); err != nil {
		t.Fatal(err)
	}
	step(&c, drive)
	c.live.finish()
	c.Windows = c.live.windows
	checkSwitch(t, c.Windows, want.Windows, cut, 7)
	// max_rate 1: at most one value a second per signal, and one at
	// the switch.
	if n, limit := valuesAfter(c.Windows, cut), c.live.eng.Streams()*(int((drive-cut)/time.Second)+2); n > limit {
		t.Errorf("%d values after the switch, over %d (1 a second for each of %d signals)", n, limit, c.live.eng.Streams())
	}
}

// checkSwitch checks the windows of a car that switched to version at
// cut against those of the same drive that did not.
func checkSwitch(t *testing.T, got, old []Window, cut time.Duration, version uint64) {
	t.Helper()
	var before, after int
	for i, w := range got {
		if w.Seq != uint64(i+1) {
			t.Fatalf("window %d: seq %d, want %d (no gap)", i, w.Seq, i+1)
		}
		switch {
		case w.At < cut:
			if w.Policy != 0 || !bytes.Equal(w.Payload, old[i].Payload) {
				t.Fatalf("window %d before the switch differs: %s, want %s", i, w.Payload, old[i].Payload)
			}
			before += w.Values
		case w.At == cut:
			if w.Policy != 0 {
				t.Errorf("the window sent at the switch carries version %d, want 0", w.Policy)
			}
		default:
			if w.Policy != version {
				t.Fatalf("window %d after the switch carries version %d, want %d", i, w.Policy, version)
			}
			after += w.Values
		}
	}
	oldAfter := valuesAfter(old, cut)
	// The idle car under the default policy (20 a second at most)
	// against max_rate 1: about a sixth.
	if after == 0 || after*3 > oldAfter {
		t.Errorf("after the switch %d values, the old policy's %d: want fewer than a third", after, oldAfter)
	}
	t.Logf("values: %d before the switch, %d after (the old policy: %d)", before, after, oldAfter)
}

// valuesAfter sums the values of the windows sent after cut.
func valuesAfter(ws []Window, cut time.Duration) int {
	n := 0
	for _, w := range ws {
		if w.At > cut {
			n += w.Values
		}
	}
	return n
}
