package simulate

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/yukart/candec/dbc"
)

// mixDBC renders a stand-in DBC with the messages of db (same IDs, names,
// senders and cycle times) each carrying exactly n simple Intel signals:
// 16-bit when n ≤ 4, 8-bit up to 8, alternately unsigned and signed. The
// bus bench's mix table measured such stand-ins at 3 and 8 signals a
// frame; mix3.dbc and mix8.dbc let candec be measured the same way.
func mixDBC(db *dbc.Database, n int) string {
	width := 16
	if n > 4 {
		width = 8
	}
	var b strings.Builder
	nodes := map[string]bool{}
	for _, m := range db.Messages {
		nodes[m.Sender] = true
	}
	var names []string
	for s := range nodes {
		names = append(names, s)
	}
	sort.Strings(names)
	fmt.Fprintf(&b, "VERSION \"yukart-mix%d\"\n\n\nNS_ :\n\tCM_\n\tBA_DEF_\n\tBA_\n\tBA_DEF_DEF_\n\nBS_:\n\nBU_: %s\n\n\n", n, strings.Join(names, " "))
	for _, m := range db.Messages {
		id := m.ID
		if m.Extended {
			id |= 1 << 31
		}
		fmt.Fprintf(&b, "BO_ %d %s: 8 %s\n", id, m.Name, m.Sender)
		for i := range n {
			sign, lo, hi := "+", 0, 1<<width-1
			if i%2 == 1 {
				sign, lo, hi = "-", -(1 << (width - 1)), 1<<(width-1)-1
			}
			fmt.Fprintf(&b, " SG_ %s_S%d : %d|%d@1%s (1,0) [%d|%d] \"\" Vector__XXX\n", m.Name, i+1, i*width, width, sign, lo, hi)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n\nCM_ \"Stand-in for load tests: the messages and rates of yukart.dbc, each carrying exactly %d signals. Generated from yukart.dbc by the simulate package's tests (-update).\";\n", n)
	b.WriteString("BA_DEF_ BO_  \"GenMsgCycleTime\" INT 0 65535;\n")
	b.WriteString("BA_DEF_ BO_  \"GenMsgSendType\" ENUM  \"Cyclic\",\"Event\",\"IfActive\",\"NoMsgSendType\";\n")
	b.WriteString("BA_DEF_DEF_  \"GenMsgCycleTime\" 0;\n")
	b.WriteString("BA_DEF_DEF_  \"GenMsgSendType\" \"NoMsgSendType\";\n")
	for _, m := range db.Messages {
		id := m.ID
		if m.Extended {
			id |= 1 << 31
		}
		fmt.Fprintf(&b, "BA_ \"GenMsgCycleTime\" BO_ %d %d;\n", id, m.CycleTime.Milliseconds())
		fmt.Fprintf(&b, "BA_ \"GenMsgSendType\" BO_ %d 0;\n", id)
	}
	return b.String()
}

// TestMixDBCs keeps mix3.dbc and mix8.dbc in step with yukart.dbc and
// checks they say what they promise.
func TestMixDBCs(t *testing.T) {
	yk := loadDB(t, "yukart.dbc")
	for _, n := range []int{3, 8} {
		name := fmt.Sprintf("mix%d.dbc", n)
		path := filepath.Join(testdata, name)
		text := mixDBC(yk, n)
		if *update {
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != text {
			t.Errorf("%s is out of date with yukart.dbc (regenerate with go test ./simulate -run TestMixDBCs -update)", name)
		}
		db := loadDB(t, name)
		if len(db.Messages) != len(yk.Messages) {
			t.Fatalf("%s: got %d messages, want %d", name, len(db.Messages), len(yk.Messages))
		}
		for i, m := range db.Messages {
			y := yk.Messages[i]
			if m.ID != y.ID || m.Extended != y.Extended || m.Name != y.Name || m.CycleTime != y.CycleTime {
				t.Errorf("%s: message %d is %s %X/%v every %s, want %s %X/%v every %s", name, i, m.Name, m.ID, m.Extended, m.CycleTime, y.Name, y.ID, y.Extended, y.CycleTime)
			}
			if len(m.Signals) != n {
				t.Errorf("%s: %s has %d signals, want %d", name, m.Name, len(m.Signals), n)
			}
		}
		if dup := db.DuplicateSignalNames(); len(dup) != 0 {
			t.Errorf("%s: signal names used twice: %v", name, dup)
		}
	}
	if dup := yk.DuplicateSignalNames(); len(dup) != 0 {
		t.Errorf("yukart.dbc: signal names used twice: %v", dup)
	}
}
