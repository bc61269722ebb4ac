package ingest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/fleet/lake"
)

const kartTopic = "fleet/kart01/yukart/window"

// acked collects what a core acknowledges.
type acked struct{ refs []ackRef }

func (a *acked) record(refs []ackRef) int { a.refs = append(a.refs, refs...); return len(refs) }

// TestRowsAreWhatWasPublished: every value of the car's window stream,
// in JSON and in MessagePack, is in the vehicle's rows once, at its
// frame's time, under its message, stale marks aside; the messages are
// acknowledged only by the commit.
func TestRowsAreWhatWasPublished(t *testing.T) {
	for _, enc := range []envelope.Encoding{envelope.JSON, envelope.Msgpack} {
		t.Run(enc.String(), func(t *testing.T) {
			wins := carWindows(t, enc)
			fl := newFakeLake()
			in := newTestIngest(t, testConfig(t, "a"), fl.opened())
			var a acked
			in.core.ack = a.record
			feed(in.core, kartTopic, wins, 1)
			if len(a.refs) != 0 {
				t.Fatalf("%d messages acknowledged before the commit", len(a.refs))
			}
			if err := in.core.close(); err != nil {
				t.Fatal(err)
			}
			if len(a.refs) != len(wins) {
				t.Errorf("acknowledged %d messages, want %d", len(a.refs), len(wins))
			}
			sameCells(t, fl.cells(), published(t, "kart01", wins))
			c := in.Counters()
			if c.Windows != uint64(len(wins)) || c.Duplicates != 0 || len(c.Malformed) != 0 || c.WindowGaps != 0 || c.EnvelopeGaps != 0 {
				t.Errorf("counters %+v", c)
			}
			if c.Rows == 0 || c.Values < c.Rows || c.Vehicles["kart01"].Values != c.Values {
				t.Errorf("counters %+v", c)
			}
			t.Logf("%d windows, %d envelopes, %d rows, %d values, %d stale", c.Windows, c.Envelopes, c.Rows, c.Values, c.Stale)
		})
	}
}

// TestRedeliveryWritesNoRowTwice: a window that comes again, in the
// same commit or after it (a QoS 1 resend), is skipped, counted and
// acknowledged.
func TestRedeliveryWritesNoRowTwice(t *testing.T) {
	wins := carWindows(t, envelope.JSON)
	fl := newFakeLake()
	in := newTestIngest(t, testConfig(t, "a"), fl.opened())
	var a acked
	in.core.ack = a.record
	half := len(wins) / 2
	feed(in.core, kartTopic, wins[:half], 1)
	feed(in.core, kartTopic, wins[:10], 1000) // again, before the commit
	if err := in.core.commit(); err != nil {
		t.Fatal(err)
	}
	feed(in.core, kartTopic, wins[half-10:], 2000) // 10 again, after it
	if err := in.core.close(); err != nil {
		t.Fatal(err)
	}
	sameCells(t, fl.cells(), published(t, "kart01", wins))
	c := in.Counters()
	if c.Duplicates != 20 || c.Windows != uint64(len(wins)) || c.Acked != uint64(len(wins)+20) {
		t.Errorf("duplicates %d, windows %d, acked %d; want 20, %d, %d", c.Duplicates, c.Windows, c.Acked, len(wins), len(wins)+20)
	}
}

// TestRestartBetweenCommitAndAck: an instance that stops after a
// manifest and before its acknowledgements leaves the broker to send the
// windows again; the next start skips every one of them, and its
// commits go on from the next number.
func TestRestartBetweenCommitAndAck(t *testing.T) {
	wins := carWindows(t, envelope.JSON)
	fl := newFakeLake()
	cfg := testConfig(t, "a")
	cfg.afterManifest = func(uint64) error { return errCrash }
	first := newTestIngest(t, cfg, fl.opened())
	var a acked
	first.core.ack = a.record
	half := len(wins) / 2
	feed(first.core, kartTopic, wins[:half], 1)
	if err := first.core.close(); !errors.Is(err, errCrash) || len(a.refs) != 0 {
		t.Fatalf("close: %v, %d acknowledged; want the crash, none", err, len(a.refs))
	}
	cfg.afterManifest = nil
	second := newTestIngest(t, cfg, fl.opened())
	second.core.ack = a.record
	feed(second.core, kartTopic, wins, 1) // the broker sends the first half again, then the rest
	if err := second.core.close(); err != nil {
		t.Fatal(err)
	}
	sameCells(t, fl.cells(), published(t, "kart01", wins))
	if c := second.Counters(); c.Duplicates != uint64(half) || c.Windows != uint64(len(wins)-half) {
		t.Errorf("second start: duplicates %d, windows %d; want %d, %d", c.Duplicates, c.Windows, half, len(wins)-half)
	}
	var manifests []string
	for _, n := range fl.store.names() {
		if strings.HasPrefix(n, ManifestDir+"/") {
			manifests = append(manifests, n)
		}
	}
	want := []string{"_candec_ingest/a/0000000000.json", "_candec_ingest/a/0000000001.json"}
	if !slices.Equal(manifests, want) {
		t.Errorf("record %q, want %q", manifests, want)
	}
}

// TestUnfinishedCommitRemoved: a commit that stopped after its data
// files and before its manifest leaves a pending record; the next start
// removes the files it names, and the windows, never acknowledged, are
// written again, once.
func TestUnfinishedCommitRemoved(t *testing.T) {
	wins := carWindows(t, envelope.JSON)
	fl := newFakeLake()
	fl.store.failWrite = func(rel string) error {
		if strings.HasSuffix(rel, "0000000000.json") && !strings.HasSuffix(rel, pendingSuffix) {
			return errors.New("store refused")
		}
		return nil
	}
	cfg := testConfig(t, "a")
	first := newTestIngest(t, cfg, fl.opened())
	var a acked
	first.core.ack = a.record
	feed(first.core, kartTopic, wins[:100], 1)
	if err := first.core.close(); !errors.Is(err, ErrCommit) || len(a.refs) != 0 {
		t.Fatalf("close: %v, %d acknowledged; want ErrCommit, none", err, len(a.refs))
	}
	data := 0
	for _, n := range fl.store.names() {
		if strings.HasSuffix(n, ".parquet") {
			data++
		}
	}
	if data == 0 {
		t.Fatal("the failed commit left no data file: the test tests nothing")
	}
	fl.store.failWrite = nil
	second := newTestIngest(t, cfg, fl.opened())
	second.core.ack = a.record
	feed(second.core, kartTopic, wins, 1)
	if err := second.core.close(); err != nil {
		t.Fatal(err)
	}
	sameCells(t, fl.cells(), published(t, "kart01", wins))
	for _, n := range fl.store.names() {
		if strings.HasSuffix(n, pendingSuffix) || strings.Contains(n, "-a-0000000000.parquet") {
			t.Errorf("%s left", n)
		}
	}
}

// TestMalformedSkipped: what is no window, or not from a vehicle, or an
// item the DBC does not know, is counted by reason, skipped, and
// acknowledged; the rest goes on.
func TestMalformedSkipped(t *testing.T) {
	wins := carWindows(t, envelope.JSON)
	foreign := `{"seq":1,"epoch":5,"start":0,"end":1,"items":[["yukart/vehicle/NoSuchSignal",{"value":1,"ts":5,"seq":1,"epoch":5}],` +
		`["other/MCU_MotorSpeed",{"value":1,"ts":5,"seq":1,"epoch":5}]]}`
	cases := []struct {
		topic, payload string
		reason         string
		n              uint64
	}{
		{kartTopic, "not json", ReasonWindow, 1},
		{kartTopic, `{"value":1,"ts":1,"seq":1}`, ReasonWindow, 1}, // an envelope, not a window
		{kartTopic, "", ReasonWindow, 1},
		{kartTopic, "\x81\xa3seq\xc1", ReasonWindow, 1},
		{"fleet//yukart/window", string(wins[0]), ReasonVehicle, 1},
		{"fleet/" + strings.Repeat("%", 80) + "/yukart/window", string(wins[0]), ReasonVehicle, 1},
		{"elsewhere/kart01", string(wins[0]), ReasonVehicle, 1},
		{"fleet/kart\xff01/yukart/window", string(wins[0]), ReasonVehicle, 1}, // not UTF-8: the record could not name it
		{kartTopic, foreign, ReasonSignal, 2},
		{kartTopic, string(wins[0]) + strings.Repeat(" ", DefaultMaxWindowBytes), ReasonSize, 1}, // a window, but too large
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s %.20q", tc.reason, tc.payload), func(t *testing.T) {
			fl := newFakeLake()
			in := newTestIngest(t, testConfig(t, "a"), fl.opened())
			var a acked
			in.core.ack = a.record
			in.core.handle(tc.topic, []byte(tc.payload), ackRef{gen: 1, id: 1})
			feed(in.core, kartTopic, wins, 2)
			if err := in.core.close(); err != nil {
				t.Fatal(err)
			}
			c := in.Counters()
			if c.Malformed[tc.reason] != tc.n || len(c.Malformed) != 1 {
				t.Errorf("malformed %v, want %s: %d", c.Malformed, tc.reason, tc.n)
			}
			if len(a.refs) != len(wins)+1 {
				t.Errorf("acknowledged %d, want %d", len(a.refs), len(wins)+1)
			}
			sameCells(t, fl.cells(), published(t, "kart01", wins))
		})
	}
}

// TestHostileVehicleEscaped: a vehicle id that is no safe path
// component names its partition escaped, never as given.
func TestHostileVehicleEscaped(t *testing.T) {
	wins := carWindows(t, envelope.JSON)
	for _, id := range []string{"..", ".", "a b", "%2E%2E", "ü", `a\b`, "-rf"} {
		fl := newFakeLake()
		in := newTestIngest(t, testConfig(t, "a"), fl.opened())
		feed(in.core, "fleet/"+id+"/yukart/window", wins[:5], 1)
		if err := in.core.close(); err != nil {
			t.Fatal(err)
		}
		for _, n := range fl.store.names() {
			if !strings.HasSuffix(n, ".parquet") {
				continue
			}
			dir, _, _ := strings.Cut(n, "/")
			v := strings.TrimPrefix(dir, "vehicle=")
			if dir != "vehicle="+lake.Escape(id) || v == "" || strings.HasPrefix(v, ".") || strings.ContainsAny(v, " \\/") || v == id && id != "-rf" {
				t.Errorf("vehicle %q: file %s", id, n)
			}
		}
		if c := in.Counters(); c.Vehicles[id].Windows != 5 {
			t.Errorf("vehicle %q: %+v", id, c.Vehicles)
		}
	}
}

// TestHugeWindow: a window of 200,000 items, each a frame of its own,
// is written whole, without the cost of matching each item against
// every row before it.
func TestHugeWindow(t *testing.T) {
	const n = 200000
	var b strings.Builder
	b.WriteString(`{"seq":1,"epoch":7,"start":0,"end":1,"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `["yukart/vehicle/MOT_Speed",{"value":%d,"ts":%d,"seq":%d,"epoch":7}]`, i%1000, 1791563856000000000+int64(i)*1000, i+1)
	}
	b.WriteString("]}")
	fl := newFakeLake()
	cfg := testConfig(t, "a")
	cfg.MaxWindowBytes = b.Len() // above the default: the grouping's cost is what is tested
	in := newTestIngest(t, cfg, fl.opened())
	in.core.handle(kartTopic, []byte(b.String()), ackRef{gen: 1, id: 1})
	if err := in.core.close(); err != nil {
		t.Fatal(err)
	}
	if c := in.Counters(); c.Rows != n || c.Values != n {
		t.Errorf("rows %d, values %d; want %d each", c.Rows, c.Values, n)
	}
}

// TestTakeAllocations: taking a window in, from payload to rows in the
// writer, allocates nothing once the buffers have grown (the writer's
// row groups and the commit aside).
func TestTakeAllocations(t *testing.T) {
	wins := carWindows(t, envelope.Msgpack)
	fl := newFakeLake()
	in := newTestIngest(t, testConfig(t, "a"), fl.opened())
	c := in.core
	c.newWriter = func(string) tableWriter { return discard{} }
	feed(c, kartTopic, wins[:1000], 1)
	i := 1000
	allocs := testing.AllocsPerRun(500, func() {
		c.handle(kartTopic, wins[i], ackRef{gen: 1, id: uint16(i)})
		i++
	})
	if allocs > 0.1 {
		t.Errorf("%.2f allocations a window, want 0", allocs)
	}
}

// discard is a tableWriter that keeps nothing.
type discard struct{}

func (discard) Write(*frame.Frame, string, []decoder.Value) error { return nil }
func (discard) Commit(string) error                               { return nil }
func (discard) Abort()                                            {}
func (discard) Committed() []string                               { return nil }
func (discard) Buffered() int64                                   { return 0 }
func (discard) DropIdle()                                         {}
func (discard) SetPolicyVersion(uint64)                           {}

// TestRowsCarryPolicyVersion: each row carries the policy version of
// the window it came in (the campaign the car ran), in both encodings.
func TestRowsCarryPolicyVersion(t *testing.T) {
	for _, enc := range []envelope.Encoding{envelope.JSON, envelope.Msgpack} {
		t.Run(enc.String(), func(t *testing.T) {
			wins := carWindows(t, enc)
			half := len(wins) / 2
			var w envelope.Window
			for i := half; i < len(wins); i++ {
				if err := envelope.ParseWindow(wins[i], &w); err != nil {
					t.Fatal(err)
				}
				e := envelope.NewWindowEncoder(enc)
				e.SetPolicy(7)
				e.Reset(w.Start, w.End)
				for _, it := range w.Items {
					e.Add(string(it.Topic), &it.Envelope)
				}
				wins[i] = e.Append(nil, w.Seq, w.Epoch)
			}
			fl := newFakeLake()
			in := newTestIngest(t, testConfig(t, "a"), fl.opened())
			feed(in.core, kartTopic, wins, 1)
			if err := in.core.close(); err != nil {
				t.Fatal(err)
			}
			before := fl.cellsOf(func(r fakeRow) bool { return r.policy == 0 })
			after := fl.cellsOf(func(r fakeRow) bool { return r.policy == 7 })
			if len(before)+len(after) != len(fl.cells()) || len(after) == 0 {
				t.Fatalf("%d cells of version 0, %d of 7, %d in all", len(before), len(after), len(fl.cells()))
			}
			sameCells(t, before, published(t, "kart01", wins[:half]))
			sameCells(t, after, published(t, "kart01", wins[half:]))
		})
	}
}
