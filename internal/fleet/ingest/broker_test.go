package ingest

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
	"github.com/parquet-go/parquet-go"

	"github.com/yukart/candec/internal/lab/mosquitto"
	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/mqttclient"
)

// fleet is the fleet's cloud broker as deploy/mosquitto ships it: TLS
// with client certificates whose common name is the user and the
// client id, fleet.acl, and fleet.conf's settings (its plugin, built
// from deploy/mosquitto/candec_fleet.c, its queue and message size
// limit); state on disk.
type fleet struct {
	dir  string
	ca   *brokertest.CA
	opts mosquitto.Options
	b    *mosquitto.Process
	// plugin is fleet.conf's plugin, candec_fleet.c, built for the test.
	plugin string
}

func startFleet(t testing.TB) *fleet {
	t.Helper()
	brokertest.RequireMosquitto(t)
	f := &fleet{dir: t.TempDir()}
	f.plugin = brokertest.BuildPlugin(t, filepath.Join("..", "..", "..", "deploy", "mosquitto", "candec_fleet.c"))
	f.ca = brokertest.NewCA(t, f.dir)
	cert, key := f.ca.Server(t, "cloud")
	f.opts = mosquitto.Options{
		Dir: f.dir, Persistence: true, Verbose: true,
		CAFile: f.ca.File, CertFile: cert, KeyFile: key,
		RequireCertificate: true, IdentityAsUsername: true,
		ACLFile: filepath.Join("..", "..", "..", "deploy", "mosquitto", "fleet.acl"),
	}
	f.start(t)
	return f
}

// fleetConf returns the global settings of fleet.conf as shipped (the
// listener's are the test's own), with the plugin built for the test
// and, as its readers, the users of the ACL file acl (fleet.conf's rule:
// the readers are fleet.acl's user blocks).
func fleetConf(t testing.TB, plugin, acl string) string {
	t.Helper()
	conf := filepath.Join("..", "..", "..", "deploy", "mosquitto", "fleet.conf")
	return brokertest.FleetConf(t, conf, plugin, aclUsers(t, acl)) + "use_username_as_clientid true\n"
}

// aclUsers returns the users of the ACL file acl's user blocks.
func aclUsers(t testing.TB, acl string) []string {
	t.Helper()
	b, err := os.ReadFile(acl)
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, l := range strings.Split(string(b), "\n") {
		if u, ok := strings.CutPrefix(strings.TrimSpace(l), "user "); ok {
			users = append(users, strings.TrimSpace(u))
		}
	}
	return users
}

// start starts the broker, on its old port if it ran before, with
// fleet.conf's settings for the ACL file of f.opts.
func (f *fleet) start(t testing.TB) {
	t.Helper()
	f.opts.Extra = fleetConf(t, f.plugin, f.opts.ACLFile)
	f.b = brokertest.StartMosquitto(t, f.opts)
	f.opts.Port = portOf(f.b.Addr)
}

func portOf(addr string) int {
	var port int
	for _, c := range addr[strings.LastIndex(addr, ":")+1:] {
		port = port*10 + int(c-'0')
	}
	return port
}

// settings are the connection settings of the certificate cn.
func (f *fleet) settings(t testing.TB, cn string) mqttclient.Settings {
	t.Helper()
	cert, key := f.ca.Client(t, cn, cn)
	return mqttclient.Settings{Broker: f.b.URL, CAFile: f.ca.File, CertFile: cert, KeyFile: key}
}

// car publishes as vehicle id, at QoS 1, as the bridge forwards.
type car struct {
	cm    *autopaho.ConnectionManager
	topic string
}

func (f *fleet) car(t testing.TB, id string) *car {
	t.Helper()
	s := f.settings(t, id)
	s.ClientID = id
	at := mqttclient.NewAttempts()
	cm, err := mqttclient.Connect(context.Background(), mqttclient.Config{Settings: s, OnConnectError: at.Record})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { disconnect(cm) })
	if err := at.Await(context.Background(), cm, s.Broker, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	return &car{cm: cm, topic: "fleet/" + id + "/yukart/window"}
}

// publish publishes payloads at QoS 1, in order.
func (c *car) publish(t testing.TB, payloads [][]byte) { c.publishRetained(t, payloads, false) }

// publishRetained publishes payloads at QoS 1, in order, retained or not.
func (c *car) publishRetained(t testing.TB, payloads [][]byte, retain bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.cm.AwaitConnection(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range payloads {
		if _, err := c.cm.Publish(context.Background(), &paho.Publish{Topic: c.topic, QoS: 1, Retain: retain, Payload: p}); err != nil {
			t.Fatal(err)
		}
	}
}

// running is an instance run in the background.
type running struct {
	in     *Ingest
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

func startIngest(t testing.TB, cfg Config) *running {
	t.Helper()
	in, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{in: in, cancel: cancel, done: make(chan struct{})}
	go func() { r.err = in.Run(ctx); close(r.done) }()
	t.Cleanup(r.stop)
	select {
	case <-in.Ready():
	case <-r.done:
		t.Fatalf("the instance stopped before it subscribed: %v", r.err)
	case <-time.After(30 * time.Second):
		t.Fatal("no subscription within 30 s")
	}
	return r
}

// stop ends the run as SIGTERM does and returns its error.
func (r *running) stop() {
	r.cancel()
	<-r.done
}

// waitFor waits until cond holds of the instance's counters.
func (r *running) waitFor(t testing.TB, what string, cond func(Counters) bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond(r.in.Counters()) {
		select {
		case <-r.done:
			t.Fatalf("the instance stopped before %s: %v", what, r.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 60 s: %+v", what, r.in.Counters())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lakeCells reads every data file of the lake at dir back: the values
// of its rows, by cell. A signal's column is named after it.
func lakeCells(t testing.TB, dir string) map[cell][]float64 {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return cellsOf(t, files)
}

// storeCells is lakeCells of a memStore.
func storeCells(t testing.TB, s *memStore) map[cell][]float64 {
	t.Helper()
	files := map[string][]byte{}
	for _, n := range s.names() {
		if strings.HasSuffix(n, ".parquet") {
			files[n], _ = s.ReadFile(n, 1<<30)
		}
	}
	return cellsOf(t, files)
}

// cellsOf reads data files, by name in the lake.
func cellsOf(t testing.TB, files map[string][]byte) map[cell][]float64 {
	t.Helper()
	out, _ := cellsAndLabels(t, files)
	return out
}

// labelCells reads the label columns of the lake at dir back, by cell
// (the cell's signal is the label column's).
func labelCells(t testing.TB, dir string) map[cell][]string {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	_, labels := cellsAndLabels(t, files)
	return labels
}

// cellsAndLabels reads data files, by name in the lake: their values
// and their labels, by cell.
func cellsAndLabels(t testing.TB, files map[string][]byte) (map[cell][]float64, map[cell][]string) {
	t.Helper()
	out, labels := map[cell][]float64{}, map[cell][]string{}
	for rel, b := range files {
		parts := strings.Split(rel, "/")
		if len(parts) != 4 || !strings.HasPrefix(parts[0], "vehicle=") || !strings.HasPrefix(parts[1], "message=") {
			t.Errorf("a data file out of place: %s", rel)
			continue
		}
		vehicle, message := strings.TrimPrefix(parts[0], "vehicle="), strings.TrimPrefix(parts[1], "message=")
		readCells(t, rel, b, func(col string, ts int64, v float64) {
			k := cell{vehicle, message, col, ts}
			out[k] = append(out[k], v)
		}, func(col string, ts int64, l string) {
			k := cell{vehicle, message, col, ts}
			labels[k] = append(labels[k], l)
		})
	}
	return out, labels
}

// readCells calls add for every non-null value of a signal column of
// the Parquet file b.
func readCells(t testing.TB, name string, b []byte, add func(col string, ts int64, v float64), addLabel func(col string, ts int64, l string)) {
	t.Helper()
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var cols []string
	for _, c := range pf.Schema().Columns() {
		cols = append(cols, c[0])
	}
	r := parquet.NewReader(pf)
	buf := make([]parquet.Row, 64)
	for {
		n, err := r.ReadRows(buf)
		for _, row := range buf[:n] {
			var ts int64
			for _, v := range row {
				if cols[v.Column()] == "time" {
					ts = v.Int64()
				}
			}
			for _, v := range row {
				name := cols[v.Column()]
				switch {
				case !v.IsNull() && strings.HasSuffix(name, "_label"):
					addLabel(name, ts, v.String())
				case v.IsNull() || name == "time" || name == "bus" || name == "id" || name == "sa" || name == "oor" || name == "policy_version" || strings.HasSuffix(name, "_label"):
				case v.Kind() == parquet.Int64:
					add(name, ts, float64(v.Int64()))
				default:
					add(name, ts, v.Double())
				}
			}
		}
		if err == io.EOF {
			return
		} else if err != nil {
			t.Fatal(err)
		}
	}
}
