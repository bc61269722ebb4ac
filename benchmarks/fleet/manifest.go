package fleet

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/goccy/go-json"
)

// manifestDir is where the ingest keeps its commit record in the lake
// (docs/ingest.md): _candec_ingest/<instance>/<n>.json per commit.
const manifestDir = "_candec_ingest"

// manifest is what the bench reads of one commit: per vehicle and epoch,
// the window seqs it committed, as ranges.
type manifest struct {
	Windows []struct {
		Vehicle string      `json:"vehicle"`
		Epoch   uint64      `json:"epoch"`
		Seqs    [][2]uint64 `json:"seqs"`
	} `json:"windows"`
	path string
	time int64 // when it was written: its file's time
}

// readManifests reads every commit's manifest in a directory lake.
func readManifests(lake string) ([]manifest, error) {
	var ms []manifest
	err := filepath.WalkDir(filepath.Join(lake, manifestDir), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".pending.json") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		m := manifest{path: p, time: fi.ModTime().UnixNano()}
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("fleet: %s: %w", p, err)
		}
		ms = append(ms, m)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fleet: the lake's commit record: %w", err)
	}
	return ms, nil
}
