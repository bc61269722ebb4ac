package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/yukart/candec/internal/fleet/lake"
)

// ManifestDir holds each instance's commit record, in a directory of
// its own: _candec_ingest/<owner>/.
const ManifestDir = "_candec_ingest"

// maxManifestBytes bounds a manifest read back: a commit of 65,535
// windows of a group, each a range of its own, is about 2 MB.
const maxManifestBytes = 64 << 20

// Suffixes of the record's files: <n>.json is commit n's manifest,
// <n>.pending.json says that commit n is being written.
const (
	manifestSuffix = ".json"
	pendingSuffix  = ".pending.json"
)

// manifest is commit n of an owner: its data files and, per vehicle
// and epoch, the window seqs whose rows they hold. Its presence is the
// commit point: the messages are acknowledged after it is written.
type manifest struct {
	Format  int              `json:"candec_ingest"`
	Owner   string           `json:"owner"`
	Commit  uint64           `json:"commit"`
	Input   string           `json:"input"`
	Files   []string         `json:"files"`
	Rows    int64            `json:"rows"`
	Windows []manifestWindow `json:"windows"`
	// Committed is every window the owner has committed, this commit's
	// and all before, per vehicle and epoch, within the bounds of
	// committedSet: what a start skips. A manifest of an older version
	// has none; a start then reads the windows of the latest ones.
	Committed []manifestWindow `json:"committed,omitempty"`
	// Streams is, for a JetStream source, every partition the owner has
	// committed messages of: the stream sequence committed up to (the
	// consumer's acknowledgement floor) and the ranges committed above
	// it (streamseq.go). A redelivery within them is skipped.
	Streams []manifestStream `json:"streams,omitempty"`
}

// manifestWindow is the windows of one vehicle and epoch in a commit.
// Commit, in Committed, is the commit that last added to them.
type manifestWindow struct {
	Vehicle string      `json:"vehicle"`
	Epoch   uint64      `json:"epoch"`
	Seqs    [][2]uint64 `json:"seqs"`
	Commit  uint64      `json:"commit,omitempty"`
}

// legacyManifests is how many of the latest manifests a start reads
// when they have no Committed (written by an older version): the
// windows of those commits were what it skipped.
const legacyManifests = 8

// pending names the files commit n may make visible before its
// manifest is written; a start that finds it without its manifest
// removes them: their windows were never acknowledged, and the broker
// sends them again.
type pending struct {
	Format int      `json:"candec_ingest_pending"`
	Owner  string   `json:"owner"`
	Commit uint64   `json:"commit"`
	Input  string   `json:"input"`
	Files  []string `json:"files"`
}

// record is an owner's commit record in the lake's store.
type record struct {
	store lake.Store
	owner string // Config.ID: a name Escape leaves as it is
	dir   string // ManifestDir/<owner>
}

func newRecord(store lake.Store, owner string) *record {
	return &record{store: store, owner: owner, dir: ManifestDir + "/" + owner}
}

// input is commit n's input name: the end of its data files' names.
func (r *record) input(n uint64) string {
	return fmt.Sprintf("%s-%010d", r.owner, n)
}

func (r *record) manifestName(n uint64) string {
	return fmt.Sprintf("%s/%010d%s", r.dir, n, manifestSuffix)
}

func (r *record) pendingName(n uint64) string {
	return fmt.Sprintf("%s/%010d%s", r.dir, n, pendingSuffix)
}

// resumed is what a start finds in the record.
type resumed struct {
	next    uint64           // the next commit's number
	windows []manifestWindow // the windows committed, Commit set
	streams []manifestStream // the partitions, of the latest manifest
	removed int              // data files of unfinished commits removed
}

// resume reads the record: the next commit number, the windows
// committed (the latest manifest's Committed), and it finishes what an
// unfinished commit left (a pending without its manifest: its files
// are removed).
func (r *record) resume() (resumed, error) {
	var res resumed
	names, err := r.store.List(r.dir)
	if err != nil {
		return res, fmt.Errorf("ingest: list %s in %s: %w", r.dir, r.store, err)
	}
	manifests := map[uint64]bool{}
	var pendings, done []uint64
	for _, name := range names {
		base := path.Base(name)
		n, isPending, ok := parseRecordName(base)
		if !ok {
			continue
		}
		if n >= res.next {
			res.next = n + 1
		}
		if isPending {
			pendings = append(pendings, n)
		} else {
			manifests[n] = true
			done = append(done, n)
		}
	}
	for _, n := range pendings {
		k, err := r.finishPending(n, manifests[n])
		if res.removed += k; err != nil {
			return res, err
		}
	}
	slices.Sort(done)
	for i := len(done) - 1; i >= max(0, len(done)-legacyManifests); i-- {
		m, err := r.readManifest(done[i])
		if err != nil {
			return res, err
		}
		if i == len(done)-1 {
			res.streams = m.Streams
		}
		for _, w := range m.Windows {
			w.Commit = m.Commit
			res.windows = append(res.windows, w)
		}
		if m.Committed != nil {
			res.windows = append(res.windows, m.Committed...)
			break
		}
	}
	return res, nil
}

// parseRecordName reads <n>.json or <n>.pending.json.
func parseRecordName(base string) (n uint64, isPending, ok bool) {
	num, isPending := strings.CutSuffix(base, pendingSuffix)
	if !isPending {
		if num, ok = strings.CutSuffix(base, manifestSuffix); !ok {
			return 0, false, false
		}
	}
	n, err := strconv.ParseUint(num, 10, 64)
	return n, isPending, err == nil
}

// finishPending removes commit n's pending, and first, when the commit
// has no manifest, the files it names. It returns how many it removed.
func (r *record) finishPending(n uint64, committed bool) (int, error) {
	removed := 0
	if !committed {
		b, err := r.store.ReadFile(r.pendingName(n), maxManifestBytes)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("ingest: %w", err)
		}
		var p pending
		if err == nil {
			if err := json.Unmarshal(b, &p); err != nil {
				return 0, fmt.Errorf("ingest: %s in %s: %w", r.pendingName(n), r.store, err)
			}
		}
		for _, f := range p.Files {
			if !strings.HasSuffix(f, "-"+r.input(n)+".parquet") {
				return removed, fmt.Errorf("ingest: %s in %s names %q, not a file of its commit", r.pendingName(n), r.store, f)
			}
			if err := r.store.Remove(f); err != nil {
				return removed, fmt.Errorf("ingest: remove %s of an unfinished commit: %w", f, err)
			}
			removed++
		}
	}
	if err := r.store.Remove(r.pendingName(n)); err != nil {
		return removed, fmt.Errorf("ingest: %w", err)
	}
	return removed, nil
}

// readManifest reads commit n's manifest.
func (r *record) readManifest(n uint64) (manifest, error) {
	var m manifest
	b, err := r.store.ReadFile(r.manifestName(n), maxManifestBytes)
	if err != nil {
		return m, fmt.Errorf("ingest: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("ingest: %s in %s: %w", r.manifestName(n), r.store, err)
	}
	if m.Commit != n {
		return m, fmt.Errorf("ingest: %s in %s: commit %d, want %d", r.manifestName(n), r.store, m.Commit, n)
	}
	return m, nil
}

// writeJSON writes v as the file name.
func (r *record) writeJSON(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := r.store.WriteFile(name, append(b, '\n')); err != nil {
		return fmt.Errorf("ingest: write %s in %s: %w", name, r.store, err)
	}
	return nil
}
