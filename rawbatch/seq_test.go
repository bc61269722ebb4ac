package rawbatch

import "testing"

func TestSeqTracker(t *testing.T) {
	type obs struct {
		seq       uint64
		count     int
		lost      uint64
		restarted bool
	}
	tests := []struct {
		name                   string
		batches                []obs
		lost, frames, restarts uint64
	}{
		{"first batch mid-stream is not loss", []obs{{1000, 10, 0, false}}, 0, 10, 0},
		{"contiguous", []obs{{0, 3, 0, false}, {3, 2, 0, false}, {5, 1, 0, false}}, 0, 6, 0},
		{"gap", []obs{{0, 3, 0, false}, {7, 2, 4, false}, {9, 1, 0, false}}, 4, 6, 0},
		{"empty batches keep position", []obs{{0, 2, 0, false}, {2, 0, 0, false}, {2, 1, 0, false}}, 0, 3, 0},
		{"restart at 0", []obs{{500, 5, 0, false}, {0, 5, 0, true}, {5, 5, 0, false}}, 0, 15, 1},
		{"restart after missing the new run's first frames", []obs{{500, 5, 0, false}, {3, 2, 3, true}}, 3, 7, 1},
		{"gap then restart then gap", []obs{{0, 1, 0, false}, {10, 1, 9, false}, {0, 1, 0, true}, {4, 1, 3, false}}, 12, 4, 1},
		{"repeated batch looks like a restart", []obs{{0, 4, 0, false}, {4, 4, 0, false}, {4, 4, 4, true}}, 4, 12, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tr SeqTracker
			for i, o := range tt.batches {
				lost, restarted := tr.Observe(o.seq, o.count)
				if lost != o.lost || restarted != o.restarted {
					t.Errorf("batch %d (seq %d): got lost %d restarted %v, want %d %v",
						i, o.seq, lost, restarted, o.lost, o.restarted)
				}
			}
			if tr.Lost() != tt.lost || tr.Frames() != tt.frames || tr.Restarts() != tt.restarts {
				t.Errorf("totals: got lost %d frames %d restarts %d, want %d %d %d",
					tr.Lost(), tr.Frames(), tr.Restarts(), tt.lost, tt.frames, tt.restarts)
			}
			last := tt.batches[len(tt.batches)-1]
			if next, ok := tr.Next(); !ok || next != last.seq+uint64(last.count) {
				t.Errorf("Next: got %d %v, want %d true", next, ok, last.seq+uint64(last.count))
			}
		})
	}
}

func TestSeqTrackerNextBeforeFirst(t *testing.T) {
	var tr SeqTracker
	if _, ok := tr.Next(); ok {
		t.Error("Next before any batch: got ok, want not ok")
	}
}
