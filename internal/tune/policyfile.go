package tune

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/pipeline"
)

// policyYAML writes a policy file that gives every signal of db the
// policy pols[sig.Index], every key written out, with comments[i] (if
// any) as a comment line above its rule. head is the file's first
// comment lines. Without comments (a candidate's file, never read by a
// person) keys that are not used are left out.
func policyYAML(db *dbc.Database, pols []pipeline.Policy, comments []string, head string) []byte {
	var b bytes.Buffer
	for _, l := range strings.Split(strings.TrimRight(head, "\n"), "\n") {
		if l != "" {
			fmt.Fprintf(&b, "# %s\n", l)
		}
	}
	// Signals of other databases, if the file is used with one: the
	// built-in default's cap and staleness.
	b.WriteString("defaults:\n  max_rate: 20\n  stale_cycles: 3\nrules:\n")
	for _, s := range db.Signals {
		if comments != nil && comments[s.Index] != "" {
			fmt.Fprintf(&b, "  # %s\n", comments[s.Index])
		}
		writeRule(&b, s, pols[s.Index], comments == nil)
	}
	return b.Bytes()
}

// writeRule writes the rule that gives signal s policy p.
// compact leaves out the deadbands and the heartbeat where they are
// not used (the defaults set none of them).
func writeRule(b *bytes.Buffer, s *dbc.Signal, p pipeline.Policy, compact bool) {
	fmt.Fprintf(b, "  - match: %s\n", strconv.Quote(escapeGlob(s.FullName())))
	if !p.Publish {
		b.WriteString("    publish: false\n")
		return
	}
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	fmt.Fprintf(b, "    publish: true\n    max_rate: %s\n    on_change: %t\n", num(p.MaxRate), p.OnChange)
	if p.OnChange || !compact {
		fmt.Fprintf(b, "    deadband: %s\n    deadband_pct: %s\n", num(p.Deadband), num(p.DeadbandPct))
	}
	if p.Heartbeat > 0 || !compact {
		fmt.Fprintf(b, "    heartbeat: %s\n", p.Heartbeat)
	}
	fmt.Fprintf(b, "    stale_after: %s\n", p.StaleAfter)
}

// escapeGlob makes name a glob that matches itself only.
func escapeGlob(name string) string {
	var b strings.Builder
	for _, r := range name {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// policyFile parses what policyYAML wrote.
func policyFile(name string, text []byte) (*pipeline.PolicyFile, error) {
	p, err := pipeline.ParsePolicy(name, text)
	if err != nil {
		return nil, fmt.Errorf("tune: a policy of the optimizer's: %w", err)
	}
	return p, nil
}
