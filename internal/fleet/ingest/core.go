package ingest

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/fleet/lake"
)

// maxVehicleBytes bounds a vehicle id once escaped: it names a
// directory, whose name a file system limits to 255 bytes.
const maxVehicleBytes = 200

// Counters are an instance's counts since it started.
type Counters struct {
	// Messages counts every message taken in: windows, duplicates and
	// malformed ones alike. Acked counts the acknowledgements sent: not
	// those of messages whose connection dropped before their commit
	// (the broker sends them again).
	Messages, Acked uint64
	// Windows, Envelopes, Rows and Values count what was taken in and
	// written (duplicates not counted); Stale the stale marks, which
	// make no row.
	Windows, Envelopes, Rows, Values, Stale uint64
	// Duplicates counts windows skipped as already taken.
	Duplicates uint64
	// Malformed counts what was skipped, by reason (Reason…).
	Malformed map[string]uint64
	// WindowGaps and EnvelopeGaps count the windows and envelopes
	// missing from gaps in seq (in a group, the other instances' share
	// counts here).
	WindowGaps, EnvelopeGaps uint64
	// Commits counts the commits made; Files the data files they made.
	Commits, Files uint64
	// Takeovers counts the sessions taken over by another client with
	// the instance's client id (ErrTakenOver): 0 or 1.
	Takeovers uint64
	// Vehicles are the counts per vehicle, by its id in the topic.
	Vehicles map[string]VehicleCounters
}

// VehicleCounters are one vehicle's counts.
type VehicleCounters struct {
	Windows, Envelopes, Rows, Values, WindowGaps, EnvelopeGaps uint64
}

// ackRef is a message to acknowledge: its packet id on the connection
// of generation gen (MQTT; a QoS 0 message has id 0 and needs none), or
// a JetStream message's reply subject, where its acknowledgement goes
// (kept rather than the message, whose payload it would hold).
type ackRef struct {
	gen   uint64
	id    uint16
	reply string
}

// filterLevels is a filter split into its levels, and the vehicle's.
type filterLevels struct {
	levels  []string
	vehicle int
}

// core is an instance without its connection: messages in, rows and
// commits out. Its methods are safe for concurrent use.
type core struct {
	cfg       Config
	sigs      signalTable
	filters   []filterLevels
	newWriter func(prefix string) tableWriter
	rec       *record
	m         *metrics
	ack       func([]ackRef) int // sends the acknowledgements of a commit, returns how many it sent
	// streams is the partitions' record of a JetStream source (nil for
	// MQTT); verify, set with it, checks before a manifest that no
	// partition's messages taken can have been sent to another instance
	// (oldest, by index: the earliest a message taken was stored, zero
	// for none taken), and returns the consumers' acknowledgement floors.
	streams *streamRecord
	verify  func(oldest []time.Time) ([]uint64, error)

	mu            sync.Mutex
	vehicles      map[string]*vehicle
	done          map[string]*committedSet // every vehicle's committed windows, by id, also of vehicles not seen since the start
	others        map[string]*committedSet // the windows other instances committed, by id, as their manifests said when a partition came here (JetStream)
	order         []*vehicle               // in order of arrival
	win           envelope.Window
	grp           grouper
	fr            frame.Frame
	acks          []ackRef
	bytes         int64
	memory        int64 // the writers' Buffered, summed
	rollStart     time.Time
	next          uint64 // the next commit's number
	committedRows uint64 // c.Rows at the last commit
	c             Counters
	closing       bool
	takenOver     atomic.Bool  // the session was taken over: commit nothing more
	holdUntil     atomic.Int64 // no commit before (ns), but the last (hold)
	err           error
	failed        chan struct{} // closed when err is set
}

// vehicle is one vehicle's writer and bookkeeping.
type vehicle struct {
	id, label, prefix string // the topic's, escaped, vehicle=<escaped>
	w                 tableWriter
	pending           map[uint64]*seqSet   // epoch → windows taken since the last commit
	done              *committedSet        // the windows committed: core.done's
	files             map[fileKey]struct{} // the files of the next commit
	envs, wins        *envelope.Tracker
	winEnv            envelope.Envelope // a window's seq and epoch, for wins
	m                 vehicleMetrics
	vc                VehicleCounters
}

// seen reports whether the window (epoch, seq) was taken already.
func (v *vehicle) seen(epoch, seq uint64) bool {
	if s := v.pending[epoch]; s != nil && s.Has(seq) {
		return true
	}
	return v.done.has(epoch, seq)
}

// take adds the window (epoch, seq) to the next commit.
func (v *vehicle) take(epoch, seq uint64) {
	if v.pending == nil {
		v.pending = map[uint64]*seqSet{}
	}
	s := v.pending[epoch]
	if s == nil {
		s = &seqSet{}
		v.pending[epoch] = s
	}
	s.Add(seq)
}

// committed ends commit n: the windows taken join the committed ones.
func (v *vehicle) committed(n uint64) {
	for epoch, seqs := range v.pending {
		v.done.add(epoch, seqs.Ranges(), n)
	}
	v.pending = nil
}

func newCore(cfg Config, newWriter func(prefix string) tableWriter, rec *record, m *metrics) (*core, error) {
	sigs, ambiguous, err := newSignalTable(cfg.SignalPrefix, cfg.Buses)
	if err != nil {
		return nil, err
	}
	if len(ambiguous) > 0 {
		cfg.Log.Warn("signals of one name in several messages: their values are skipped (reason signal)", "signals", ambiguous)
	}
	c := &core{cfg: cfg, sigs: sigs, newWriter: newWriter, rec: rec, m: m, ack: func(refs []ackRef) int { return len(refs) },
		vehicles: map[string]*vehicle{}, done: map[string]*committedSet{}, failed: make(chan struct{}), rollStart: cfg.Now(),
		c: Counters{Malformed: map[string]uint64{}}}
	for _, f := range cfg.Filters {
		lvl, err := vehicleLevel(f)
		if err != nil {
			return nil, err
		}
		c.filters = append(c.filters, filterLevels{levels: splitLevels(f), vehicle: lvl})
	}
	return c, nil
}

// resume takes what the record says: the next commit's number and the
// windows committed.
func (c *core) resume(r resumed) {
	c.next = r.next
	for _, w := range r.windows {
		c.committedOf(w.Vehicle).add(w.Epoch, w.Seqs, w.Commit)
	}
}

// committedOf returns id's committed windows, made empty on first use.
// A vehicle's writer and trackers are made only once it sends again.
func (c *core) committedOf(id string) *committedSet {
	d := c.done[id]
	if d == nil {
		d = &committedSet{}
		c.done[strings.Clone(id)] = d
	}
	return d
}

// vehicle returns id's vehicle, made on its first window.
func (c *core) vehicle(id string) *vehicle {
	if v := c.vehicles[id]; v != nil {
		return v
	}
	id = strings.Clone(id)
	label := lake.Escape(id)
	v := &vehicle{id: id, label: label, prefix: "vehicle=" + label, files: map[fileKey]struct{}{},
		envs: envelope.NewTracker(), wins: envelope.NewTracker(), m: c.m.vehicle(label)}
	v.w = c.newWriter(v.prefix)
	v.done = c.committedOf(id)
	c.vehicles[id] = v
	c.order = append(c.order, v)
	return v
}

// vehicleOf returns the vehicle of topic: the level that a filter's +
// matched.
func (c *core) vehicleOf(topic string) (string, bool) {
	for _, f := range c.filters {
		if v, ok := matchVehicle(f, topic); ok {
			return v, true
		}
	}
	return "", false
}

// splitLevels splits a filter into its levels.
func splitLevels(filter string) []string { return strings.Split(filter, "/") }

// matchVehicle matches topic against f and returns its vehicle level.
func matchVehicle(f filterLevels, topic string) (string, bool) {
	rest, vehicle, end := topic, "", false
	for i, l := range f.levels {
		if l == "#" {
			return vehicle, true
		}
		if end {
			return "", false
		}
		lvl, after, more := strings.Cut(rest, "/")
		if l != "+" && l != lvl {
			return "", false
		}
		if i == f.vehicle {
			vehicle = lvl
		}
		rest, end = after, !more
	}
	if !end {
		return "", false
	}
	return vehicle, true
}

// hold holds the commits back until until: after a connection the
// broker closed without a word, which may have been a takeover, the
// windows held may be sent to another client too; the instance commits
// again once its new connection has lasted (takeover.go). The last
// commit, at the end, is not held.
func (c *core) hold(until time.Time) { c.holdUntil.Store(until.UnixNano()) }

func (c *core) held() bool { return c.cfg.Now().UnixNano() < c.holdUntil.Load() }

// takeover stops the instance: another client took over its session.
// Nothing more is committed: the broker sends what the instance holds
// to the other client.
func (c *core) takeover(clientID, how string) {
	c.takenOver.Store(true)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c.Takeovers > 0 {
		return
	}
	c.c.Takeovers++
	c.m.takeovers.Inc()
	c.fail(fmt.Errorf("%w as %s (%s): two instances of one --id, or of one certificate; this one stops, and what it held uncommitted goes to the other", ErrTakenOver, clientID, how))
}

// fail ends the instance with err (the first error only).
func (c *core) fail(err error) {
	if c.err == nil {
		c.err = err
		close(c.failed)
	}
}

// handle takes one message in. ref is what acknowledges it, once its
// rows are committed.
func (c *core) handle(topic string, payload []byte, ref ackRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing || c.err != nil {
		return // not acknowledged: the broker sends it again
	}
	c.handleLocked(topic, payload, ref)
}

// handleLocked is handle with c.mu held.
func (c *core) handleLocked(topic string, payload []byte, ref ackRef) {
	c.acks = append(c.acks, ref)
	c.c.Messages++
	if len(payload) > c.cfg.MaxWindowBytes {
		// Refused before it is parsed: a window's items and rows cost
		// several times its bytes.
		c.malformed(ReasonSize)
		c.cfg.Log.Debug("a window too large", "topic", topic, "bytes", len(payload), "max", c.cfg.MaxWindowBytes)
	} else {
		c.bytes += int64(len(payload))
		if err := c.take(topic, payload); err != nil {
			c.fail(err)
			return
		}
	}
	c.m.unacked.Set(float64(len(c.acks)))
	if c.full() && !c.held() {
		if err := c.commit(); err != nil {
			c.fail(err)
		}
	}
}

// skip counts a message skipped whole for reason, and acknowledges it
// with the next commit's: it will never be taken.
func (c *core) skip(reason string, ref ackRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing || c.err != nil {
		return
	}
	c.acks = append(c.acks, ref)
	c.c.Messages++
	c.malformed(reason)
}

// malformed counts a skipped message or envelope.
func (c *core) malformed(reason string) {
	c.c.Malformed[reason]++
	c.m.malformed.WithLabelValues(reason).Inc()
}

// take parses a window and writes its rows; an error is the lake's.
func (c *core) take(topic string, payload []byte) error {
	id, ok := c.vehicleOf(topic)
	// An id that is not UTF-8 would come back from the commit record as
	// another (JSON makes it U+FFFD); escaping never shortens one.
	if !ok || id == "" || (c.vehicles[id] == nil && (len(id) > maxVehicleBytes || !utf8.ValidString(id) || len(lake.Escape(id)) > maxVehicleBytes)) {
		c.malformed(ReasonVehicle)
		return nil
	}
	w := &c.win
	if err := envelope.ParseWindow(payload, w); err != nil {
		c.malformed(ReasonWindow)
		c.cfg.Log.Debug("not a window", "topic", topic, "err", err)
		return nil
	}
	v := c.vehicle(id)
	if v.seen(w.Epoch, w.Seq) || c.others[id].has(w.Epoch, w.Seq) {
		c.c.Duplicates++
		c.m.duplicates.Inc()
		return nil
	}
	v.take(w.Epoch, w.Seq)
	v.winEnv.Seq, v.winEnv.Epoch = w.Seq, w.Epoch
	lost := v.wins.Observe("", &v.winEnv).Lost
	v.vc.Windows++
	v.vc.WindowGaps += lost
	c.c.Windows++
	c.c.WindowGaps += lost
	v.m.windows.Inc()
	if lost > 0 {
		v.m.windowGaps.Add(float64(lost))
	}
	return c.rows(v, w)
}

// rows groups a window's envelopes into rows and writes them.
func (c *core) rows(v *vehicle, w *envelope.Window) error {
	c.grp.reset()
	var lost, stale uint64
	for i := range w.Items {
		it := &w.Items[i]
		si := c.sigs[string(it.Topic)]
		if si == nil {
			// Not tracked either: a car's unknown topics must not grow
			// the ingest's memory.
			c.malformed(ReasonSignal)
			continue
		}
		lost += v.envs.ObserveBytes(it.Topic, &it.Envelope).Lost
		switch {
		case it.Envelope.Flags&envelope.Stale != 0:
			stale++
		case !timeFits(it.Envelope.TS):
			c.malformed(ReasonTime)
		case !si.fits(&it.Envelope):
			c.malformed(ReasonValue)
		default:
			c.grp.add(si, &it.Envelope)
		}
	}
	var values uint64
	v.w.SetPolicyVersion(w.Policy)
	before := v.w.Buffered()
	defer func() { c.memory += v.w.Buffered() - before }()
	for i := range c.grp.n {
		r := &c.grp.rows[i]
		m := r.si.s.Message
		c.fr.ID, c.fr.Time = m.ID, r.ts
		if err := v.w.Write(&c.fr, r.si.bus, r.vals); err != nil {
			return fmt.Errorf("ingest: write the rows of %s: %w", v.prefix, err)
		}
		v.files[fileKey{m, r.si.bus, lake.Day(r.ts)}] = struct{}{}
		values += uint64(len(r.vals))
	}
	n, rows := uint64(len(w.Items)), uint64(c.grp.n)
	v.vc.Envelopes += n
	v.vc.EnvelopeGaps += lost
	v.vc.Rows += rows
	v.vc.Values += values
	c.c.Envelopes += n
	c.c.EnvelopeGaps += lost
	c.c.Rows += rows
	c.c.Values += values
	c.c.Stale += stale
	v.m.envelopes.Add(float64(n))
	v.m.rows.Add(float64(rows))
	v.m.values.Add(float64(values))
	if lost > 0 {
		v.m.envelopeGaps.Add(float64(lost))
	}
	if stale > 0 {
		c.m.stale.Add(float64(stale))
	}
	return nil
}

// full reports whether the messages taken call for a commit: by
// count, bytes or memory.
func (c *core) full() bool {
	return len(c.acks) >= c.cfg.MaxUnacked || c.bytes >= c.cfg.RollBytes || c.memory >= c.cfg.RollMemory
}

// rollIfOld commits when the oldest message waiting is RollAge old, or
// when a commit held back (hold) is due by count, bytes or memory: the
// broker may have stopped sending meanwhile (Receive Maximum).
func (c *core) rollIfOld(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing || c.err != nil || now.Sub(c.rollStart) < c.cfg.RollAge && !c.full() || c.held() {
		return
	}
	if err := c.commit(); err != nil {
		c.fail(err)
	}
}

// close stops taking messages and commits what was taken.
func (c *core) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	c.closing = true
	if err := c.commit(); err != nil {
		c.fail(err)
		return err
	}
	return nil
}

// counters returns a copy of the counts.
func (c *core) counters() Counters {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.c
	out.Malformed = maps.Clone(c.c.Malformed)
	out.Vehicles = make(map[string]VehicleCounters, len(c.order))
	for _, v := range c.order {
		out.Vehicles[v.id] = v.vc
	}
	return out
}

// commit makes what was taken since the last commit durable, then
// acknowledges it: a pending record naming the files, the data files,
// the manifest (the commit point), and only then the acknowledgements.
// An error leaves the messages unacknowledged; the instance must stop.
func (c *core) commit() error {
	start := c.cfg.Now()
	c.rollStart = start
	if len(c.acks) == 0 {
		return nil
	}
	n := c.next
	if err := c.claim(n); err != nil {
		return err
	}
	input := c.rec.input(n)
	expected, writers := c.expectedFiles(input)
	if len(expected) > 0 {
		p := pending{Format: 1, Owner: c.cfg.ID, Commit: n, Input: input, Files: expected}
		if err := c.rec.writeJSON(c.rec.pendingName(n), p); err != nil {
			return fmt.Errorf("%w: %d: %w", ErrCommit, n, err)
		}
	}
	c.next++
	files, err := commitWriters(writers, input, expected)
	if err != nil {
		return fmt.Errorf("%w: %d: %w", ErrCommit, n, err)
	}
	if c.takenOver.Load() {
		// Its files stay named in the pending record, which the next
		// start of this id removes with them.
		return fmt.Errorf("%w: commit %d not recorded", ErrTakenOver, n)
	}
	m := manifest{Format: 1, Owner: c.cfg.ID, Commit: n, Input: input, Files: files,
		Rows: int64(c.c.Rows - c.committedRows), Windows: c.pendingWindows()}
	if c.streams != nil {
		streams, err := c.streamsCommitted(n)
		if err != nil {
			return err
		}
		m.Streams = streams
	}
	// From here the instance either records the commit or stops: its
	// windows join the committed ones, which the manifest records whole.
	for _, v := range c.order {
		v.committed(n)
	}
	for _, id := range slices.Sorted(maps.Keys(c.done)) {
		m.Committed = append(m.Committed, c.done[id].windows(id)...)
	}
	if len(m.Windows) > 0 || len(files) > 0 || len(m.Streams) > 0 {
		if err := c.rec.writeJSON(c.rec.manifestName(n), m); err != nil {
			return fmt.Errorf("%w: %d: %w", ErrCommit, n, err)
		}
	}
	if len(expected) > 0 {
		if err := c.rec.store.Remove(c.rec.pendingName(n)); err != nil {
			return fmt.Errorf("%w: %d: %w", ErrCommit, n, err)
		}
	}
	if hook := c.cfg.afterManifest; hook != nil {
		if err := hook(n); err != nil {
			return err
		}
	}
	c.c.Acked += uint64(c.ack(c.acks))
	c.c.Commits++
	c.c.Files += uint64(len(files))
	for _, v := range c.order {
		clear(v.files)
	}
	c.acks, c.bytes, c.memory, c.committedRows = c.acks[:0], 0, 0, c.c.Rows
	c.m.unacked.Set(0)
	c.m.commits.Inc()
	c.m.commitSeconds.Observe(c.cfg.Now().Sub(start).Seconds())
	return nil
}

// claim checks, before commit n, that it is this instance's to make:
// its session was not taken over, and no other instance of its id has
// written commit n in the record meanwhile (in object storage nothing
// else keeps two instances of one id apart).
func (c *core) claim(n uint64) error {
	if c.takenOver.Load() {
		return fmt.Errorf("%w: commit %d not made", ErrTakenOver, n)
	}
	for _, name := range []string{c.rec.manifestName(n), c.rec.pendingName(n)} {
		_, err := c.rec.store.ReadFile(name, maxManifestBytes)
		switch {
		case err == nil:
			return fmt.Errorf("%w: %s in %s was written by another instance of id %s since this one started; this one stops", ErrRecordTaken, name, c.rec.store, c.cfg.ID)
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("%w: %d: %w", ErrCommit, n, err)
		}
	}
	return nil
}

// expectedFiles returns the names of the files the next commit makes,
// sorted, and the writers that have rows.
func (c *core) expectedFiles(input string) ([]string, []tableWriter) {
	var names []string
	var writers []tableWriter
	for _, v := range c.order {
		if len(v.files) == 0 {
			continue
		}
		writers = append(writers, v.w)
		for k := range v.files {
			names = append(names, v.prefix+"/message="+lake.Escape(k.msg.Name)+"/date="+lake.DayDate(k.day)+"/"+lake.Escape(k.bus)+"-"+input+".parquet")
		}
	}
	slices.Sort(names)
	return names, writers
}

// commitWriters commits writers, several at once, and returns the
// files they made, sorted, which must be among expected.
func commitWriters(writers []tableWriter, input string, expected []string) ([]string, error) {
	var g errgroup.Group
	g.SetLimit(8)
	for _, w := range writers {
		g.Go(func() error {
			// A vehicle's writer keeps no Parquet buffers between
			// commits: with many vehicles they would outgrow any bound.
			defer w.DropIdle()
			return w.Commit(input)
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var files []string
	for _, w := range writers {
		files = append(files, w.Committed()...)
	}
	slices.Sort(files)
	for _, f := range files {
		if _, ok := slices.BinarySearch(expected, f); !ok {
			return nil, fmt.Errorf("the lake made %s, which the pending record does not name (a restart would not find it)", f)
		}
	}
	return files, nil
}

// pendingWindows lists the windows taken since the last commit.
func (c *core) pendingWindows() []manifestWindow {
	var out []manifestWindow
	for _, v := range c.order {
		epochs := slices.Sorted(maps.Keys(v.pending))
		for _, e := range epochs {
			out = append(out, manifestWindow{Vehicle: v.id, Epoch: e, Seqs: v.pending[e].Ranges()})
		}
	}
	return out
}
