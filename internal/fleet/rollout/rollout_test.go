package rollout

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/campaign"
)

// TestWriteStatus: a line per car, what it runs and its last outcome;
// a car's own text (its id, a refusal's detail) reaches the terminal
// escaped.
func TestWriteStatus(t *testing.T) {
	at := time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)
	cars := []Car{
		{Vehicle: "kart01", Pushed: &campaign.Body{Version: 7}, Ack: &campaign.Ack{Vehicle: "kart01",
			Applied: campaign.Applied{Version: 7, Hash: "sha256:1adef1b2548a0368", At: at},
			Last:    &campaign.Outcome{Version: 7, Result: campaign.ResultApplied, At: at}}},
		{Vehicle: "kart02", Ack: &campaign.Ack{Vehicle: "kart02",
			Last: &campaign.Outcome{Version: 8, Result: campaign.ResultRefused, Reason: campaign.ReasonDBC, Detail: "tuned for\x1b[2J", At: at}}},
		{Vehicle: "kart\x1b]0;x\a03"},
	}
	var b strings.Builder
	if err := WriteStatus(&b, cars); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"VEHICLE APPLIED",
		"kart01 7 7 1adef1b2548a 2026-12-04T21:00:00Z applied version 7",
		"kart02 - 0 (policy file) - refused version 8 (dbc): tuned for\\x1b[2J",
		"kart\\x1b]0;x\\a03 - - - - no acknowledgement",
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got\n%s", b.String())
	}
	for i, l := range lines[1:] {
		if got := strings.Join(strings.Fields(l), " "); got != want[i+1] {
			t.Errorf("line %d: got %q, want %q", i+1, got, want[i+1])
		}
	}
	if strings.ContainsRune(b.String(), '\x1b') {
		t.Error("an ESC reached the output")
	}
}

// TestReadRefusesBadGlob: a glob path.Match cannot read is an error
// before any connection.
func TestReadRefusesBadGlob(t *testing.T) {
	if _, err := Read(context.Background(), Config{}, "kart["); err == nil {
		t.Error("a bad glob was taken")
	}
}
