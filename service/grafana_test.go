package service

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// dashboardFile is the Grafana dashboard shipped for the service.
const dashboardFile = "../deploy/grafana/candec.json"

// targetLabels are the labels Prometheus adds to every series it
// scrapes; the service does not register them, a dashboard may use them.
var targetLabels = []string{"instance", "job"}

// registered returns every metric name the service registers with the
// label names each carries: a histogram under its own name and as the
// _bucket (with le), _sum and _count series a query sees.
func registered(t *testing.T) map[string][]string {
	t.Helper()
	reg := prometheus.NewRegistry()
	if _, err := newMetrics(reg, func() float64 { return 0 }, func() float64 { return 0 }); err != nil {
		t.Fatal(err)
	}
	if err := (&Service{}).initReload(reg, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, f := range fams {
		var labels []string
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if !slices.Contains(labels, l.GetName()) {
					labels = append(labels, l.GetName())
				}
			}
		}
		name := f.GetName()
		out[name] = labels
		if f.GetType() == dto.MetricType_HISTOGRAM {
			out[name+"_bucket"] = append(slices.Clone(labels), "le")
			out[name+"_sum"] = labels
			out[name+"_count"] = labels
		}
	}
	return out
}

// promRefs returns the metric names (identifiers that start with
// candec_) and the label names an expression uses: those inside {…}
// selectors and in by, without, on, ignoring and group_left/right
// lists. Strings, durations in […] and $variables are skipped. It is
// not a PromQL parser: enough to check a dashboard's names.
func promRefs(expr string) (metrics, labels []string) {
	isStart := func(c byte) bool { return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	isPart := func(c byte) bool { return isStart(c) || c >= '0' && c <= '9' }
	grouping := map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}
	braces, inList := 0, false
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(expr) && expr[j] != c {
				if expr[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			i = j + 1
		case c == '[':
			for i < len(expr) && expr[i] != ']' {
				i++
			}
		case c == '{':
			braces++
			i++
		case c == '}':
			braces--
			i++
		case c == ')' && inList:
			inList = false
			i++
		case c == '$':
			i++
			for i < len(expr) && (isPart(expr[i]) || expr[i] == '{' || expr[i] == '}') {
				i++
			}
		case c >= '0' && c <= '9' || c == '.':
			for i < len(expr) && (isPart(expr[i]) || expr[i] == '.') {
				i++
			}
		case isStart(c):
			j := i
			for j < len(expr) && isPart(expr[j]) {
				j++
			}
			id := expr[i:j]
			i = j
			switch {
			case braces > 0 || inList:
				labels = append(labels, id)
			case grouping[id]:
				k := i
				for k < len(expr) && expr[k] == ' ' {
					k++
				}
				if k < len(expr) && expr[k] == '(' {
					inList, i = true, k+1
				}
			case strings.HasPrefix(id, "candec_"):
				metrics = append(metrics, id)
			}
		default:
			i++
		}
	}
	return metrics, labels
}

// legendLabel finds the labels a legend format shows: {{kind}}.
var legendLabel = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// queryProblems says what in one query the service does not register: a
// metric, or a label that none of the query's metrics carries.
func queryProblems(expr, legend string, reg map[string][]string) []string {
	metrics, labels := promRefs(expr)
	for _, m := range legendLabel.FindAllStringSubmatch(legend, -1) {
		labels = append(labels, m[1])
	}
	var out []string
	if len(metrics) == 0 {
		out = append(out, "queries no candec_ metric")
	}
	allowed := slices.Clone(targetLabels)
	for _, m := range metrics {
		ls, ok := reg[m]
		if !ok {
			out = append(out, "metric "+m+" is not registered")
			continue
		}
		allowed = append(allowed, ls...)
	}
	for _, l := range labels {
		if !slices.Contains(allowed, l) {
			out = append(out, "label "+l+" is on none of "+strings.Join(metrics, ", "))
		}
	}
	return out
}

func TestPromRefs(t *testing.T) {
	for _, tt := range []struct {
		expr            string
		metrics, labels []string
	}{
		{`candec_broker_connected`, []string{"candec_broker_connected"}, nil},
		{`sum by (reason) (rate(candec_envelopes_suppressed_total{instance=~"$instance", kind!="x{y}"}[$__rate_interval]))`,
			[]string{"candec_envelopes_suppressed_total"}, []string{"reason", "instance", "kind"}},
		{`histogram_quantile(0.99, sum(rate(candec_publish_latency_seconds_bucket[5m])) by (le, job))`,
			[]string{"candec_publish_latency_seconds_bucket"}, []string{"le", "job"}},
		{`time() - candec_policy_loaded_timestamp_seconds / on(instance) group_left(version) candec_build_info`,
			[]string{"candec_policy_loaded_timestamp_seconds", "candec_build_info"}, []string{"instance", "version"}},
		{`rate(up[1m]) * 1e3`, nil, nil},
	} {
		m, l := promRefs(tt.expr)
		if !slices.Equal(m, tt.metrics) || !slices.Equal(l, tt.labels) {
			t.Errorf("promRefs(%s) = %q, %q; want %q, %q", tt.expr, m, l, tt.metrics, tt.labels)
		}
	}
}

// TestQueryProblems: the check finds a misspelt metric and a label the
// metric does not carry, and passes a query that is right.
func TestQueryProblems(t *testing.T) {
	reg := registered(t)
	for _, tt := range []struct {
		expr, legend string
		want         []string
	}{
		{`sum by (kind) (rate(candec_envelopes_published_total[5m]))`, "{{kind}}", nil},
		{`histogram_quantile(0.5, sum by (le) (rate(candec_publish_latency_seconds_bucket[5m])))`, "", nil},
		{`rate(candec_publish_latency_seconds_count[5m])`, "", nil},
		{`rate(candec_envelopes_publised_total[5m])`, "", []string{"metric candec_envelopes_publised_total is not registered"}},
		{`sum by (reason) (rate(candec_envelopes_published_total[5m]))`, "", []string{"label reason is on none of candec_envelopes_published_total"}},
		{`rate(candec_envelopes_published_total[5m])`, "{{reson}}", []string{"label reson is on none of candec_envelopes_published_total"}},
		{`sum by (le) (rate(candec_publish_latency_seconds_sum[5m]))`, "", []string{"label le is on none of candec_publish_latency_seconds_sum"}},
		{`rate(cadnec_raw_frames_total[5m])`, "", []string{"queries no candec_ metric"}},
	} {
		if got := queryProblems(tt.expr, tt.legend, reg); !slices.Equal(got, tt.want) {
			t.Errorf("queryProblems(%s, %q) = %q, want %q", tt.expr, tt.legend, got, tt.want)
		}
	}
}

// dashboard is the part of Grafana's JSON model the test reads.
type dashboard struct {
	SchemaVersion int `json:"schemaVersion"`
	Templating    struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type panel struct {
	Type       string      `json:"type"`
	Title      string      `json:"title"`
	Datasource *datasource `json:"datasource"`
	Targets    []struct {
		Datasource   *datasource `json:"datasource"`
		Expr         string      `json:"expr"`
		LegendFormat string      `json:"legendFormat"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row's
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// TestGrafanaDashboard: the dashboard imports into any Grafana with a
// Prometheus data source (a ${datasource} variable, no fixed uid), and
// every metric and label it queries is one the service registers, so a
// renamed metric cannot leave an empty panel behind.
func TestGrafanaDashboard(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if d.SchemaVersion < 36 {
		t.Errorf("schemaVersion %d, want 36 or more (a datasource per panel by uid)", d.SchemaVersion)
	}
	var hasDS bool
	for _, v := range d.Templating.List {
		if v.Name == "datasource" && v.Type == "datasource" && string(v.Query) == `"prometheus"` {
			hasDS = true
		}
	}
	if !hasDS {
		t.Errorf("no datasource variable of type datasource, query prometheus")
	}

	reg := registered(t)
	used := map[string]bool{}
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if p.Datasource == nil || p.Datasource.UID != "${datasource}" || p.Datasource.Type != "prometheus" {
				t.Errorf("panel %q: datasource %+v, want prometheus ${datasource}", p.Title, p.Datasource)
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for _, q := range p.Targets {
				if q.Datasource != nil && q.Datasource.UID != "${datasource}" {
					t.Errorf("panel %q: a query's datasource is %q, want ${datasource}", p.Title, q.Datasource.UID)
				}
				for _, pr := range queryProblems(q.Expr, q.LegendFormat, reg) {
					t.Errorf("panel %q: %s: %s", p.Title, pr, q.Expr)
				}
				ms, _ := promRefs(q.Expr)
				for _, m := range ms {
					used[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_sum"), "_count")] = true
				}
			}
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		var q struct {
			Query string `json:"query"`
		}
		if v.Type != "query" || json.Unmarshal(v.Query, &q) != nil {
			continue
		}
		ms, _ := promRefs(q.Query)
		for _, m := range ms {
			if _, ok := reg[m]; !ok {
				t.Errorf("variable %s: metric %s is not registered", v.Name, m)
			}
		}
	}

	// What an operator asks first must be on it.
	var missing []string
	for _, m := range []string{
		"candec_raw_frames_total", "candec_frames_decoded_total", "candec_frames_unknown_id_total",
		"candec_raw_frames_lost_total", "candec_envelopes_published_total", "candec_envelopes_suppressed_total",
		"candec_publish_queue_depth", "candec_publish_latency_seconds", "candec_broker_connected",
		"candec_broker_connect_failures_total", "candec_broker_takeovers_total", "candec_policy_reloads_total",
		"candec_build_info",
	} {
		if !used[m] {
			missing = append(missing, m)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the dashboard shows none of %q", missing)
	}
}
