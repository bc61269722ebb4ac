package fleet

// A car whose drive is made during the run: its engine, its frames, and
// the windows it has made so far.

import (
	"fmt"
	"time"

	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/pipeline"
)

// liveDrive is one car's engine running over its frames. NewCar uses
// it to make a whole drive before the run; a car a campaign may reach
// keeps it (Car.live) and makes the rest of its drive during the run,
// step by step, applying the campaign between two steps as the service
// applies one between two batches.
type liveDrive struct {
	start  int64 // the car's Start
	period int64 // the window stream's period
	eng    *pipeline.Engine
	frames *replay
	w      envelope.Window
	// cut, when > 0, is the frame time windows are sent at although
	// their end is later: the open window sent when the policy version
	// changes.
	cut int64
	err error // the first window that did not parse
	// windows are the windows made so far: Car.Windows.
	windows []Window
}

// take is the engine's sink: it keeps each window as the car publishes
// it.
func (d *liveDrive) take(o *pipeline.Out) {
	if o.Kind != pipeline.KindWindow {
		return
	}
	if err := envelope.ParseWindow(o.Payload, &d.w); err != nil {
		if d.err == nil {
			d.err = fmt.Errorf("window %d: %w", o.Seq, err)
		}
		return
	}
	at := d.w.End
	if d.cut > 0 && at > d.cut {
		at = d.cut
	}
	d.windows = append(d.windows, Window{At: time.Duration(at - d.start), Seq: o.Seq,
		Values: len(d.w.Items), Policy: d.w.Policy, Payload: append([]byte(nil), o.Payload...)})
}

// runTo runs the frames before frame time t, then moves the engine to
// t: every window that ends at or before t is made.
func (d *liveDrive) runTo(t int64) {
	for d.frames.ok && d.frames.next.Time < t {
		d.eng.Frame(&d.frames.next)
		d.frames.load()
	}
	if t <= d.frames.end {
		d.eng.Advance(t)
	}
}

// finish runs the rest of the frames and ends the drive as the car's
// engine ends a capture (Flush at the drive's end).
func (d *liveDrive) finish() {
	for d.frames.ok {
		d.eng.Frame(&d.frames.next)
		d.frames.load()
	}
	d.eng.Flush(d.frames.end)
}

// done reports whether the drive has ended (finish ran).
func (d *liveDrive) done() bool { return !d.frames.ok }

// apply runs the frames up to t and applies policy p of campaign
// version version there, as the service applies a campaign: the open
// window goes out under the old version, then the engine runs p, every
// seq going on. An error leaves the old policy and version running.
func (d *liveDrive) apply(t int64, version uint64, p *pipeline.PolicyFile) error {
	d.runTo(t)
	old := d.eng.PolicyVersion()
	d.cut = t
	d.eng.SetPolicyVersion(version)
	d.cut = 0
	if _, err := d.eng.SetPolicies(p); err != nil {
		d.eng.SetPolicyVersion(old)
		return err
	}
	return nil
}
