package fleet

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/envelope"
)

func testCars(t testing.TB, n int, drive time.Duration) []Car {
	return testCarsAt(t, n, drive, 1_800_000_000_000_000_000)
}

// testCarsAt makes n cars' drives starting at start (ns).
func testCarsAt(t testing.TB, n int, drive time.Duration, start int64) []Car {
	t.Helper()
	cfg := testCarConfig(t, drive, start)
	cars := make([]Car, n)
	for i := range cars {
		var err error
		if cars[i], err = NewCar(cfg, i); err != nil {
			t.Fatal(err)
		}
	}
	return cars
}

// testCarConfig is the test cars' config: the kart's DBC and its idle
// capture, drives of drive from start (ns).
func testCarConfig(t testing.TB, drive time.Duration, start int64) CarConfig {
	t.Helper()
	db, err := dbc.Load("../../testdata/yukart.dbc")
	if err != nil {
		t.Fatal(err)
	}
	fs, err := ReadFrames(context.Background(), "../../testdata/idle.log")
	if err != nil {
		t.Fatal(err)
	}
	return CarConfig{DB: db, Frames: fs, Drive: drive, Start: start, Seed: 7}
}

// TestNewCar: a car's windows are the window stream of candec's engine:
// seq 1, 2, 3, … in order, due in order within the drive, each parsing
// with its own seq and epoch; two cars differ (their own starting frame
// and epoch), and the same seed makes the same drives.
func TestNewCar(t *testing.T) {
	const drive = 5 * time.Second
	cars := testCars(t, 2, drive)
	again := testCars(t, 2, drive)
	for ci, c := range cars {
		if len(c.Windows) < 100 {
			t.Fatalf("car %s: %d windows in %v, want the car's ~96/s", c.ID, len(c.Windows), drive)
		}
		var w envelope.Window
		var last time.Duration
		for i, win := range c.Windows {
			if win.Seq != uint64(i+1) {
				t.Fatalf("car %s: window %d has seq %d, want %d", c.ID, i, win.Seq, i+1)
			}
			if win.At < last || win.At > drive+10*time.Millisecond {
				t.Fatalf("car %s: window %d due at %v after %v (drive %v)", c.ID, i, win.At, last, drive)
			}
			last = win.At
			if err := envelope.ParseWindow(win.Payload, &w); err != nil {
				t.Fatal(err)
			}
			if w.Seq != win.Seq || w.Epoch != c.Epoch || len(w.Items) != win.Values || win.Values == 0 {
				t.Fatalf("car %s: window %d: seq %d epoch %d items %d, want %d %d %d", c.ID, i, w.Seq, w.Epoch, len(w.Items), win.Seq, c.Epoch, win.Values)
			}
		}
		if !bytes.Equal(c.Windows[10].Payload, again[ci].Windows[10].Payload) {
			t.Errorf("car %s: the same seed made another drive", c.ID)
		}
	}
	if cars[0].Epoch == cars[1].Epoch || bytes.Equal(cars[0].Windows[10].Payload, cars[1].Windows[10].Payload) {
		t.Errorf("two cars publish the same window 10")
	}
	t.Logf("car %s: %d windows, %d values, %d payload bytes in %v", cars[0].ID, len(cars[0].Windows), cars[0].Values(), cars[0].Bytes(), drive)
}

func BenchmarkNewCar(b *testing.B) {
	for b.Loop() {
		testCars(b, 1, 10*time.Second)
	}
}

// Bytes returns the bytes of the car's window payloads.
func (c *Car) Bytes() int {
	n := 0
	for i := range c.Windows {
		n += len(c.Windows[i].Payload)
	}
	return n
}
