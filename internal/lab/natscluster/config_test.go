package natscluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func TestValidVehicle(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{"kart01", true}, {"car_00001", true}, {"KART-7", true},
		{"", false}, {"kart.01", false}, {"kart/01", false}, {"*", false}, {">", false},
		{"kart+", false}, {"#", false}, {"kart 01", false}, {`kart"01`, false}, {"CN=x", false},
		{"kärt", false}, {strings.Repeat("k", 64), true}, {strings.Repeat("k", 65), false},
	} {
		err := ValidVehicle(tc.id)
		if got := err == nil; got != tc.ok {
			t.Errorf("ValidVehicle(%q) = %v, want ok %v", tc.id, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrVehicle) {
			t.Errorf("ValidVehicle(%q) = %v, want ErrVehicle", tc.id, err)
		}
		if _, err := CarUser(tc.id); (err == nil) != tc.ok {
			t.Errorf("CarUser(%q): %v, want ok %v", tc.id, err, tc.ok)
		}
	}
}

// TestDeployAccounts reads deploy/nats/accounts.conf: its car lines are
// CarUser's, and Accounts replaces them with the given cars'.
func TestDeployAccounts(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", ConfigDir, AccountsFile))
	if err != nil {
		t.Fatal(err)
	}
	ids, err := CarLines(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) == 0 {
		t.Fatalf("%s lists no car", AccountsFile)
	}
	text, err := Accounts(string(b), []string{"car00000", "car00001"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := CarLines(text)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"car00000", "car00001"}; !slices.Equal(got, want) {
		t.Fatalf("cars after Accounts: %q, want %q", got, want)
	}
	for _, user := range []string{"ingest", "fleet-admin", CampaignsUser} {
		if !strings.Contains(text, `user: "CN=`+user+`"`) {
			t.Fatalf("Accounts lost the user %s", user)
		}
		// A car of another user's name would be a second user of it.
		if _, err := Accounts(string(b), []string{"car00000", user}); !errors.Is(err, ErrVehicle) {
			t.Fatalf("Accounts with car %s: %v, want ErrVehicle", user, err)
		}
	}
	if _, err := Accounts(string(b), []string{"kart.01"}); !errors.Is(err, ErrVehicle) {
		t.Fatalf("Accounts with car kart.01: %v, want ErrVehicle", err)
	}
	// A car reads its own policy topic only, with no deny (which would
	// refuse its bridge's QoS 1 subscription: CarPolicy).
	if line, _ := CarUser("kart01"); !strings.HasSuffix(line, `subscribe: ["fleet.kart01.yukart.policy"] } }`) {
		t.Fatalf("CarUser(kart01) = %s", line)
	}
	for from, to := range map[string]string{
		`subscribe: ["fleet.kart01.yukart.policy"]`: `subscribe: ["fleet.*.yukart.policy"]`,
		`subscribe: ["fleet.kart02.yukart.policy"]`: `subscribe: { deny: [">"] }`,
	} {
		if _, err := CarLines(strings.Replace(string(b), from, to, 1)); err == nil {
			t.Fatalf("CarLines took a car line with %s", to)
		}
	}
	if _, err := Accounts("accounts {}", nil); err == nil {
		t.Fatal("Accounts of a text without the marks: no error")
	}
	if _, err := CarLines(strings.Replace(string(b), `publish: ["fleet.kart01.yukart.window"`, `publish: ["fleet.kart01.>"`, 1)); err == nil {
		t.Fatal("CarLines took a car line that publishes under fleet.kart01.>")
	}
}

// TestCarSubjects: a car may publish exactly what its bridge sends
// (deploy/mosquitto/bridge.conf: its "out" topics and its state
// notification), as NATS subjects.
func TestCarSubjects(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "mosquitto", "bridge.conf"))
	if err != nil {
		t.Fatal(err)
	}
	var sent []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 6 && f[0] == "topic" && f[2] == "out":
			sent = append(sent, f[5]+f[1]) // remote prefix + topic
		case len(f) == 2 && f[0] == "notification_topic":
			sent = append(sent, f[1])
		}
	}
	var may []string
	for _, s := range CarSubjects {
		may = append(may, strings.ReplaceAll(fmt.Sprintf(s, "kart01"), ".", "/"))
	}
	slices.Sort(sent)
	slices.Sort(may)
	if len(sent) == 0 || !slices.Equal(sent, may) {
		t.Fatalf("bridge.conf sends %q, a car may publish %q", sent, may)
	}
}

// TestReadStream reads deploy/nats's three files: FLEET is R3, takes
// no subjects of its own and sources $MQTT_msgs through the durable
// flow-controlled consumer, partitioned by its transform; files that
// do not fit together are refused, naming the file.
func TestReadStream(t *testing.T) {
	deploy := filepath.Join("..", "..", "..", ConfigDir)
	d, err := ReadDeploy(deploy)
	if err != nil {
		t.Fatal(err)
	}
	if d.Stream.Replicas != 3 || d.Msgs.Replicas != 3 || d.Source.Replicas != 3 {
		t.Fatalf("replicas %d, %d, %d: want R3 for FLEET, $MQTT_msgs and the source consumer", d.Stream.Replicas, d.Msgs.Replicas, d.Source.Replicas)
	}
	if len(d.Stream.Subjects) != 0 || d.Stream.SubjectTransform != nil {
		t.Fatalf("stream %s takes subjects %q (transform %+v): a window published on the core subject is stored with no acknowledgement back",
			d.Stream.Name, d.Stream.Subjects, d.Stream.SubjectTransform)
	}
	// The windows only: a car's status, bridge state and campaign
	// acknowledgement, and the policies pushed to it (retained, QoS 1),
	// are stored in $MQTT_msgs too and must not reach the ingest.
	if d.Msgs.Subjects[0] != "$MQTT.msgs.>" || d.Source.FilterSubject != "$MQTT.msgs.fleet.*.yukart.window" || d.Source.MaxDeliver != -1 || !d.Source.FlowControl {
		t.Fatalf("$MQTT_msgs %q, consumer %+v", d.Msgs.Subjects, d.Source)
	}
	if n, err := Partitions(d.Stream); err != nil || n != DeployPartitions {
		t.Fatalf("Partitions = %d, %v; want %d", n, err, DeployPartitions)
	}
	if tr := d.Stream.Sources[0].SubjectTransforms[0]; tr.Source != d.Source.FilterSubject || !strings.HasSuffix(tr.Destination, ".yukart.window") {
		t.Fatalf("the source's transform %+v does not take the windows only", tr)
	}
	read := func(f string) string {
		b, err := os.ReadFile(filepath.Join(deploy, f))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct{ file, from, to string }{
		{StreamFile, `"name": "FLEET"`, `"name": "FLEET"`[:8]}, // broken JSON
		{StreamFile, `"deliver_subject": "fleetsource.FLEET"`, `"deliver_subject": "elsewhere"`},
		{StreamFile, `"name": "FLEET",`, `"name": "FLEET", "subjects": ["fleet.*.>"],`},
		{SourceConsumerFile, `"ack_policy": "flow_control"`, `"ack_policy": "none"`},
		{SourceConsumerFile, `"durable_name": "FLEET"`, `"durable_name": "OTHER"`},
		{SourceConsumerFile, `"filter_subject": "$MQTT.msgs.fleet.*.yukart.window"`, `"filter_subject": "$MQTT.msgs.fleet.>"`},
		{MsgsFile, `"name": "$MQTT_msgs"`, `"name": "MSGS"`},
		{MsgsFile, `"retention": "interest"`, `"retention": "limits"`},
	} {
		dir := t.TempDir()
		for _, f := range []string{StreamFile, SourceConsumerFile, MsgsFile} {
			text := read(f)
			if f == tc.file {
				if !strings.Contains(text, tc.from) {
					t.Fatalf("%s holds no %q", f, tc.from)
				}
				text = strings.Replace(text, tc.from, tc.to, 1)
			}
			if err := os.WriteFile(filepath.Join(dir, f), []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := ReadDeploy(dir); err == nil || !strings.Contains(err.Error(), tc.file) {
			t.Errorf("ReadDeploy with %s's %q as %q: %v, want an error naming %s", tc.file, tc.from, tc.to, err, tc.file)
		}
	}
	// A stream of subjects (no source) is partitioned by its own transform.
	own := d.Stream
	own.Sources, own.Subjects = nil, []string{"fleet.*.>"}
	own.SubjectTransform = &jetstream.SubjectTransformConfig{Source: "fleet.*.>", Destination: "p.{{partition(4,1)}}.fleet.{{wildcard(1)}}.>"}
	if n, err := Partitions(own); err != nil || n != 4 {
		t.Fatalf("Partitions of a stream of subjects = %d, %v; want 4", n, err)
	}
	own.SubjectTransform = nil
	if _, err := Partitions(own); err == nil {
		t.Fatal("Partitions of a stream with no transform: no error")
	}
}

// TestDeployEnv: every node's environment file sets exactly the FLEET_
// variables fleet.conf reads, and so does Start.
func TestDeployEnv(t *testing.T) {
	dir := filepath.Join("..", "..", "..", ConfigDir)
	conf, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range strings.FieldsFunc(string(conf), func(r rune) bool { return r != '_' && (r < 'A' || r > 'Z') }) {
		if strings.HasPrefix(f, "FLEET_") && !slices.Contains(want, f) {
			want = append(want, f)
		}
	}
	slices.Sort(want)
	for i := 1; i <= DefaultNodes; i++ {
		name := filepath.Join(dir, "nats"+strconv.Itoa(i)+".env")
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := envKeys(string(b)); !slices.Equal(got, want) {
			t.Errorf("%s sets %q, fleet.conf reads %q", name, got, want)
		}
	}
	c, err := prepare(Options{ConfigDir: dir, Dir: t.TempDir(), Nodes: DefaultNodes}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := envKeys(strings.Join(c.Nodes[0].env, "\n")); !slices.Equal(got, want) {
		t.Errorf("Start sets %q, fleet.conf reads %q", got, want)
	}
}

// envKeys returns the sorted FLEET_ keys of KEY=value lines.
func envKeys(text string) []string {
	var keys []string
	for _, line := range strings.Split(text, "\n") {
		if k, _, ok := strings.Cut(line, "="); ok && strings.HasPrefix(k, "FLEET_") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
