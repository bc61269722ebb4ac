package pipeline

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the tables of keys in docs/policy.md from policyKeys and selectorKeys")

const policyDoc = "../docs/policy.md"

// keysTable is the table of settings in docs/policy.md.
func keysTable() string {
	var b strings.Builder
	b.WriteString("| key | type | default | meaning |\n|---|---|---|---|\n")
	for _, k := range policyKeys {
		typ := k.typ.name
		if k.unit != "" {
			typ += ", " + k.unit
		}
		def := "—"
		if k.def != "" {
			def = "`" + k.def + "`"
			if k.note != "" {
				def += " (" + k.note + ")"
			}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k.name, typ, def, k.doc)
	}
	return b.String()
}

// selectorsTable is the table of selectors in docs/policy.md.
func selectorsTable() string {
	var b strings.Builder
	b.WriteString("| key | matches |\n|---|---|\n")
	for _, k := range selectorKeys {
		fmt.Fprintf(&b, "| `%s` | %s |\n", k.name, k.doc)
	}
	return b.String()
}

// TestPolicyDocKeys checks that docs/policy.md lists the keys the parser
// knows, as the tables describe them. Run with -update to rewrite the
// marked blocks after changing a key.
func TestPolicyDocKeys(t *testing.T) {
	data, err := os.ReadFile(policyDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, block := range []struct{ name, want string }{
		{"keys", keysTable()},
		{"selectors", selectorsTable()},
	} {
		open, end := "<!-- "+block.name+" -->\n", "<!-- /"+block.name+" -->"
		i := strings.Index(doc, open)
		j := strings.Index(doc, end)
		if i < 0 || j < i {
			t.Errorf("%s has no block %q…%q", policyDoc, open, end)
			continue
		}
		i += len(open)
		if got := doc[i:j]; got != block.want {
			if *update {
				doc = doc[:i] + block.want + doc[j:]
				continue
			}
			t.Errorf("%s: the %s block differs from the table in the code (go test -run TestPolicyDocKeys -update rewrites it):\ngot:\n%swant:\n%s", policyDoc, block.name, got, block.want)
		}
	}
	if *update && doc != string(data) {
		if err := os.WriteFile(policyDoc, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPolicyKeysOverride checks, for every setting, that it is parsed,
// kept and merged: a rule that sets it overrides the defaults, for every
// signal, and the value changes some signal's resolved policy.
func TestPolicyKeysOverride(t *testing.T) {
	db := testDB(t)
	values := map[string][2]string{
		"bool":     {"true", "false"},
		"number":   {"1", "2"},
		"duration": {"1s", "2s"},
	}
	for _, k := range policyKeys {
		v, ok := values[k.typ.name]
		if !ok {
			t.Fatalf("%s: no test values for type %q", k.name, k.typ.name)
		}
		parse := func(src string) *PolicyFile {
			t.Helper()
			p, err := ParsePolicy(k.name+".yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		a := parse(fmt.Sprintf("defaults:\n  %s: %s\n", k.name, v[0]))
		b := parse(fmt.Sprintf("defaults:\n  %s: %s\n", k.name, v[1]))
		ab := parse(fmt.Sprintf("defaults:\n  %s: %s\nrules:\n  - match: \"*\"\n    %s: %s\n", k.name, v[0], k.name, v[1]))
		differs := false
		for _, s := range db.Signals {
			if got, want := ab.Resolve(s), b.Resolve(s); got != want {
				t.Errorf("%s: %s set by defaults then a rule resolves to %+v, want the rule's %+v", s.Name, k.name, got, want)
			}
			differs = differs || a.Resolve(s) != b.Resolve(s)
		}
		if !differs {
			t.Errorf("%s: %s and %s resolve alike for every signal; the key is not used", k.name, v[0], v[1])
		}
	}
}

// TestPolicyKeyNames checks that the tables name each key once and that
// an unknown key's error lists them all.
func TestPolicyKeyNames(t *testing.T) {
	seen := map[string]bool{"defaults": true, "rules": true}
	var all []string
	for _, k := range selectorKeys {
		all = append(all, k.name)
	}
	for _, k := range policyKeys {
		all = append(all, k.name)
	}
	for _, n := range all {
		if seen[n] {
			t.Errorf("key %q appears twice", n)
		}
		seen[n] = true
	}
	_, err := ParsePolicy("p.yaml", []byte("rules:\n  - nope: 1\n"))
	if want := "(want " + strings.Join(all, ", ") + ")"; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("unknown key in a rule: %v, want it to end in %q", err, want)
	}
}

// TestDescribe: a resolved policy's text names what limits it, in the
// order of the keys.
func TestDescribe(t *testing.T) {
	tests := []struct {
		p    Policy
		want string
	}{
		{Policy{}, "not published"},
		{Policy{Publish: true}, "every value"},
		{Policy{Publish: true, MaxRate: 50}, "cap 50 Hz"},
		{Policy{Publish: true, MaxRate: 20, OnChange: true, Deadband: 0.5, Heartbeat: 1e9, StaleAfter: 15e8}, "cap 20 Hz, on change ±0.5, heartbeat 1s, stale 1.5s"},
		{Policy{Publish: true, OnChange: true, DeadbandPct: 2}, "on change ±2%"},
	}
	for _, tt := range tests {
		if got := tt.p.Describe(); got != tt.want {
			t.Errorf("Describe(%+v) = %q, want %q", tt.p, got, tt.want)
		}
	}
}

// TestPolicyKeysText checks, for every setting, that two values that
// resolve differently read differently in Policy.Describe: a key added
// without its text (or shown by no other row) fails here.
func TestPolicyKeysText(t *testing.T) {
	db := testDB(t)
	values := map[string][2]string{
		"bool":     {"true", "false"},
		"number":   {"1", "2"},
		"duration": {"1s", "2s"},
	}
	for _, k := range policyKeys {
		v := values[k.typ.name]
		// on_change shows the deadbands; a stale_after would hide
		// stale_cycles and stale_default.
		base := "  on_change: true\n"
		if k.name == "on_change" {
			base = ""
		}
		parse := func(val string) *PolicyFile {
			t.Helper()
			p, err := ParsePolicy(k.name+".yaml", []byte(fmt.Sprintf("defaults:\n%s  %s: %s\n", base, k.name, val)))
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		a, b := parse(v[0]), parse(v[1])
		differs := false
		for _, s := range db.Signals {
			pa, pb := a.Resolve(s), b.Resolve(s)
			if pa == pb {
				continue
			}
			differs = true
			if pa.Describe() == pb.Describe() {
				t.Errorf("%s: %s = %s and %s resolve to %+v and %+v, both described as %q", s.Name, k.name, v[0], v[1], pa, pb, pa.Describe())
			}
		}
		if !differs {
			t.Errorf("%s: %s and %s resolve alike for every signal", k.name, v[0], v[1])
		}
	}
}

// TestPolicySettings checks, for every setting and two values of each,
// that Policy.Settings writes a resolved policy back: a rule of its keys,
// under defaults that set every key otherwise, resolves to the same
// policy for every signal. It yields exactly the keys a resolved policy
// keeps, in the table's order.
func TestPolicySettings(t *testing.T) {
	db := testDB(t)
	values := map[string][2]string{
		"bool":     {"true", "false"},
		"number":   {"0.25", "2"},
		"duration": {"1.5s", "2m0.001s"},
	}
	others := map[string]string{"bool": "false", "number": "7", "duration": "7s"}
	var wantKeys, defaults []string
	for _, k := range policyKeys {
		if k.typ.value != nil {
			wantKeys = append(wantKeys, k.name)
		}
		defaults = append(defaults, fmt.Sprintf("  %s: %s\n", k.name, others[k.typ.name]))
	}
	var gotKeys []string
	for key := range (Policy{}).Settings() {
		gotKeys = append(gotKeys, key)
	}
	if !slices.Equal(gotKeys, wantKeys) {
		t.Errorf("Settings yields the keys %q, want those a resolved policy keeps, %q", gotKeys, wantKeys)
	}
	for _, k := range policyKeys {
		for _, v := range values[k.typ.name] {
			src := fmt.Sprintf("defaults:\n  %s: %s\n", k.name, v)
			pf := mustPolicy(t, src)
			out := "defaults:\n" + strings.Join(defaults, "") + "rules:\n"
			for _, s := range db.Signals {
				out += fmt.Sprintf("  - match: %q\n", s.FullName())
				for key, val := range pf.Resolve(s).Settings() {
					out += fmt.Sprintf("    %s: %s\n", key, val)
				}
			}
			back := mustPolicy(t, out)
			for _, s := range db.Signals {
				if got, want := back.Resolve(s), pf.Resolve(s); got != want {
					t.Errorf("%s: %s written by Settings resolves to %+v, want %+v; the file:\n%s", s.FullName(), strings.TrimSpace(src), got, want, out)
				}
			}
		}
	}
}
