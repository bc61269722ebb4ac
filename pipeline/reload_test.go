package pipeline

import (
	"errors"
	"fmt"
	"testing"
)

// phase is a policy and the steps run under it: the first phase's
// policy builds the engine, each later one is set with SetPolicies at
// the engine's time after the steps before it.
type phase struct {
	policy string
	steps  []step
}

// runPhases runs phases through one engine and checks what every
// subscriber relies on across a swap: one epoch, and on each topic seq
// going up by exactly one.
func runPhases(t *testing.T, phases []phase) (*Engine, *recorder, []PolicyChanges) {
	t.Helper()
	const epoch = 77
	rec := &recorder{t: t}
	var e *Engine
	var changes []PolicyChanges
	for i, ph := range phases {
		p, err := ParsePolicy("test.yaml", []byte(ph.policy))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if e, err = New(testDB(t), Config{Policies: p, Epoch: epoch}, rec); err != nil {
				t.Fatal(err)
			}
		} else {
			ch, err := e.SetPolicies(p)
			if err != nil {
				t.Fatalf("phase %d: SetPolicies: %v", i, err)
			}
			changes = append(changes, ch)
		}
		for _, s := range ph.steps {
			if s.id == 0 {
				e.Advance(t0 + s.at*ms)
				continue
			}
			f := fr(s.at*ms, s.id, s.raw)
			e.Frame(&f)
		}
	}
	last := map[string]uint64{}
	for _, o := range rec.outs {
		if o.kind == KindWindow {
			continue
		}
		if o.env.Epoch != epoch {
			t.Errorf("%s #%d: got epoch %d, want %d throughout", o.topic, o.env.Seq, o.env.Epoch, epoch)
		}
		if want := last[o.topic] + 1; o.env.Seq != want {
			t.Errorf("%s: got seq %d after %d, want %d (no gap, no repeat)", o.topic, o.env.Seq, last[o.topic], want)
		}
		last[o.topic] = o.env.Seq
	}
	return e, rec, changes
}

func TestSetPolicies(t *testing.T) {
	for _, tc := range []struct {
		name    string
		phases  []phase
		want    []string
		changes []PolicyChanges
	}{
		{
			// Code has no cycle time: a held value is due at the
			// window's end. At 1 Hz the value at 100 is held until 1000;
			// at 10 Hz the window opened at 0 closed at 100, so it goes
			// out at the swap, and the next windows are 100 ms.
			name: "faster cap: the held value goes out at once, then the new windows",
			phases: []phase{
				{"defaults: {max_rate: 1}", []step{{0, 0x300, 1}, {100, 0x300, 2}}},
				{"defaults: {max_rate: 10}", []step{{150, 0x300, 3}, {180, 0x300, 4}, adv(300), {320, 0x300, 5}, {350, 0x300, 6}, adv(500)}},
			},
			want: []string{
				"Code value 1 @0 #1",
				"Code trailing 2 @100 #2", // at the swap (100)
				"Code trailing 4 @180 #3", // at 200: the window of the swap's publish
				"Code value 5 @320 #4",
				"Code trailing 6 @350 #5", // at 420
			},
			changes: []PolicyChanges{{Changed: 5}}, // defaults: every signal
		},
		{
			name: "slower cap: the held value is carried to the new window's end",
			phases: []phase{
				{"defaults: {max_rate: 10}", []step{{0, 0x300, 1}, {50, 0x300, 2}}},
				{"defaults: {max_rate: 1}", []step{adv(500), adv(1001), {1100, 0x300, 3}, adv(1999), adv(2001)}},
			},
			want: []string{
				"Code value 1 @0 #1",
				"Code trailing 2 @50 #2",   // at 1000, not 100
				"Code trailing 3 @1100 #3", // at 2000: the window from 1000 is 1 s too
			},
			changes: []PolicyChanges{{Changed: 5}},
		},
		{
			name: "a held value is superseded under the new cap as under the old",
			phases: []phase{
				{"defaults: {max_rate: 10}", []step{{0, 0x300, 1}, {50, 0x300, 2}}},
				{"defaults: {max_rate: 1}", []step{{600, 0x300, 3}, adv(1001)}},
			},
			want: []string{"Code value 1 @0 #1", "Code trailing 3 @600 #2"},
		},
		{
			name: "cap removed: the held value goes out at the swap",
			phases: []phase{
				{"defaults: {max_rate: 1}", []step{{0, 0x100, 1}, {10, 0x100, 2}}},
				{"defaults: {max_rate: 0}", []step{{20, 0x100, 3}, {30, 0x100, 4}}},
			},
			want: []string{"Speed value 0.01 @0 #1", "Speed trailing 0.02 @10 #2", "Speed value 0.03 @20 #3", "Speed value 0.04 @30 #4"},
		},
		{
			name: "unpublished: the held value is flushed, then nothing; republished: seq goes on",
			phases: []phase{
				{"defaults: {max_rate: 1}", []step{{0, 0x300, 1}, {100, 0x300, 2}}},
				{"rules: [{match: Code, publish: false}]", []step{{200, 0x300, 3}, adv(3000)}},
				{"defaults: {max_rate: 1}", []step{{3100, 0x300, 4}, {3200, 0x300, 5}, adv(4200)}},
			},
			want: []string{
				"Code value 1 @0 #1",
				"Code flush 2 @100 #2",
				"Code value 4 @3100 #3", // the first value after it is published again: at once
				"Code trailing 5 @3200 #4",
			},
			changes: []PolicyChanges{{Changed: 5, Unpublished: 1}, {Changed: 5, Published: 1}},
		},
		{
			name: "newly published, never before: seq starts at 1",
			phases: []phase{
				{"rules: [{match: Code, publish: false}]", []step{{0, 0x300, 1}, {10, 0x100, 1}}},
				{"{}", []step{{20, 0x300, 2}, {30, 0x100, 2}}},
			},
			want:    []string{"Speed value 0.01 @10 #1", "Code value 2 @20 #1", "Speed value 0.02 @30 #2"},
			changes: []PolicyChanges{{Changed: 1, Published: 1}},
		},
		{
			name: "shorter heartbeat: due at once, then on the new period",
			phases: []phase{
				{"rules: [{match: Gear, on_change: true, heartbeat: 1s}]", []step{{0, 0x201, 1}, {300, 0x201, 1}}},
				{"rules: [{match: Gear, on_change: true, heartbeat: 200ms}]", []step{adv(650)}},
			},
			want: []string{
				"Gear value 1 @0 #1 R",
				"Gear heartbeat 1 @300 #2 R", // at the swap (300): 0 + 200 ms had passed
				"Gear heartbeat 1 @300 #3 R", // at 500
			},
			changes: []PolicyChanges{{Changed: 1}},
		},
		{
			name: "longer heartbeat: the old deadline no longer fires",
			phases: []phase{
				{"rules: [{match: Gear, on_change: true, heartbeat: 100ms}]", []step{{0, 0x201, 1}, {50, 0x201, 1}}},
				{"rules: [{match: Gear, on_change: true, heartbeat: 1s}]", []step{adv(999), adv(1001)}},
			},
			want: []string{"Gear value 1 @0 #1 R", "Gear heartbeat 1 @50 #2 R"}, // at 1000
		},
		{
			name: "heartbeat removed",
			phases: []phase{
				{"rules: [{match: Gear, on_change: true, heartbeat: 100ms}]", []step{{0, 0x201, 1}}},
				{"rules: [{match: Gear, on_change: true}]", []step{adv(5000)}},
			},
			want: []string{"Gear value 1 @0 #1 R"},
		},
		{
			// TempA: raw 50 is 10 °C. 12 °C is within the old deadband
			// of 5 and outside the new one of 1.
			name: "smaller deadband: the next value is compared with it",
			phases: []phase{
				{"rules: [{match: TempA, on_change: true, deadband: 5}]", []step{{0, 0x200, 50}, {100, 0x200, 52}}},
				{"rules: [{match: TempA, on_change: true, deadband: 1}]", []step{{200, 0x200, 52}, {300, 0x200, 52}, {400, 0x200, 53}}},
			},
			want: []string{"TempA value 10 @0 #1", "TempA value 12 @200 #2"},
		},
		{
			name: "shorter stale_after: marked stale at the swap",
			phases: []phase{
				{"defaults: {stale_after: 1s}", []step{{0, 0x300, 1}, adv(300)}},
				{"defaults: {stale_after: 200ms}", []step{adv(2000)}},
			},
			want: []string{"Code value 1 @0 #1", "Code stale 1 @0 #2 stale"},
		},
		{
			name: "longer stale_after: marked at the new deadline only",
			phases: []phase{
				{"defaults: {stale_after: 200ms}", []step{{0, 0x300, 1}, adv(100)}},
				{"defaults: {stale_after: 1s}", []step{adv(999), adv(1001)}},
			},
			want: []string{"Code value 1 @0 #1", "Code stale 1 @0 #2 stale"}, // at 1000
		},
		{
			name: "stale_after removed",
			phases: []phase{
				{"defaults: {stale_after: 200ms}", []step{{0, 0x300, 1}, adv(100)}},
				{"{}", []step{adv(5000)}},
			},
			want: []string{"Code value 1 @0 #1"},
		},
		{
			name: "the same policy changes nothing",
			phases: []phase{
				{"defaults: {max_rate: 1}", []step{{0, 0x300, 1}, {100, 0x300, 2}}},
				{"defaults:\n  max_rate: 1\n", []step{adv(1001)}},
			},
			want:    []string{"Code value 1 @0 #1", "Code trailing 2 @100 #2"},
			changes: []PolicyChanges{{}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, rec, changes := runPhases(t, tc.phases)
			diff(t, rec.lines(), tc.want)
			for i, want := range tc.changes {
				if i < len(changes) && changes[i] != want {
					t.Errorf("swap %d: got %+v, want %+v", i+1, changes[i], want)
				}
			}
		})
	}
}

// TestSetPoliciesRepublish: after a swap, Republish repeats only the
// signals still published.
func TestSetPoliciesRepublish(t *testing.T) {
	e, rec, _ := runPhases(t, []phase{
		{"{}", []step{{0, 0x300, 1}, {0, 0x100, 1}}},
		{"rules: [{match: Code, publish: false}]", nil},
	})
	e.Republish()
	diff(t, rec.lines(), []string{"Code value 1 @0 #1", "Speed value 0.01 @0 #1", "Speed republish 0.01 @0 #2"})
}

// TestSetPoliciesClash: a policy that gives two published signals one
// topic is refused, and the old one keeps working.
func TestSetPoliciesClash(t *testing.T) {
	p, err := ParsePolicy("a.yaml", []byte("rules: [{match: Code, publish: false}, {match: Count, publish: false}, {match: TempA, publish: false}, {match: Gear, publish: false}]"))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{t: t}
	e, err := New(testDB(t), Config{Policies: p, TopicTemplate: "yukart/one"}, rec)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.SetPolicies(DefaultPolicy())
	if !errors.Is(err, ErrTopic) {
		t.Fatalf("SetPolicies with a clash: got %v, want ErrTopic", err)
	}
	if got := e.Topics(); len(got) != 1 {
		t.Errorf("after the refused swap: got topics %q, want the old policy's one", got)
	}
	f := fr(0, 0x300, 1)
	e.Frame(&f)
	f = fr(0, 0x100, 1)
	e.Frame(&f)
	diff(t, rec.lines(), []string{"yukart/one value 0.01 @0 #1"})
}

// TestSetPolicyVersion: the window open at a version change is sent
// with the old version, the envelopes after it go in a window of the
// same period with the new one, and the window seq has no gap.
func TestSetPolicyVersion(t *testing.T) {
	p, err := ParsePolicy("p", []byte(`defaults: {max_rate: 1000}`))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{t: t}
	e, err := New(testDB(t), Config{Policies: p, Window: &WindowConfig{}, Epoch: 7}, rec)
	if err != nil {
		t.Fatal(err)
	}
	frameAt := func(at int64, raw uint16) {
		f := fr(at*ms, idCount, raw)
		e.Frame(&f)
	}
	frameAt(0, 1)
	frameAt(2, 2)
	e.SetPolicyVersion(3)
	e.SetPolicyVersion(3) // no change: nothing sent
	frameAt(4, 3)
	frameAt(12, 4)
	e.SetPolicyVersion(0)
	frameAt(25, 5)
	e.Advance(t0 + 100*ms)
	var got []string
	for _, o := range rec.outs {
		if o.kind == KindWindow {
			got = append(got, fmt.Sprintf("#%d @%d policy %d items %d", o.win.Seq, (o.win.Start-t0)/ms, o.win.Policy, len(o.win.Items)))
		}
	}
	diff(t, got, []string{
		"#1 @0 policy 0 items 2",
		"#2 @0 policy 3 items 1",
		"#3 @10 policy 3 items 1",
		"#4 @20 policy 0 items 1",
	})
}
