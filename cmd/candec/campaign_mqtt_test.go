package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/campaign"
	"github.com/yukart/candec/internal/lab/natscluster"
	"github.com/yukart/candec/internal/testkit/natstest"
	"github.com/yukart/candec/mqttclient"
)

// TestCampaignMQTTFlag: push's and status's --mqtt takes 5 and 3.1.1
// only; anything else is exit 2 naming the flag, before any connection.
func TestCampaignMQTTFlag(t *testing.T) {
	camp := filepath.Join(t.TempDir(), "c.json") // never read: the flag is refused first
	for _, cmd := range []string{"push", "status"} {
		for _, v := range []string{"", "3", "4", "3.1", "5.0", "v5", "mqttv311", "3.1.1 ", "311"} {
			args := []string{"campaign", cmd, "--broker", "mqtt://127.0.0.1:1", "--mqtt", v}
			if cmd == "push" {
				args = append(args, camp)
			}
			_, stderr, code := runCmd(t, args...)
			if want := "campaign " + cmd + ": --mqtt"; code != 2 || !strings.Contains(stderr, want) {
				t.Errorf("candec %q: exit %d, want 2 with %q:\n%s", args, code, want, stderr)
			}
		}
	}
}

// TestCampaignNATS311: on the 3-node NATS cluster as deploy/nats ships
// it, `candec campaign push --mqtt 3.1.1` as the campaigns user pushes
// a campaign, retained, to kart01's policy topic: kart01, subscribed on
// another node, is sent it byte for byte. kart01 acknowledges it (over
// 3.1.1, retained, as its bridge does), and `campaign status --mqtt
// 3.1.1` on a third node lists kart01 with the version pushed (read
// back from the retained policy topic) and the one it applied, and no
// other car. Without the flag the node refuses the MQTT 5 CONNECT.
func TestCampaignNATS311(t *testing.T) {
	c := natstest.Start(t, natstest.Options{Cars: []string{"kart01", "kart02"}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cert, key, err := c.Identity("campaigns")
	if err != nil {
		t.Fatal(err)
	}
	on := func(node int, cmd string, args ...string) []string {
		return append([]string{"campaign", cmd, "--broker", c.Nodes[node].MQTTURL, "--ca-file", c.CAFile,
			"--cert-file", cert, "--key-file", key}, args...)
	}
	camp, _ := benchCampaignFiles(t, t.TempDir(), "c", "kart0[1-2]")
	want, err := os.ReadFile(camp)
	if err != nil {
		t.Fatal(err)
	}
	got := carListens(ctx, t, c, 1, "kart01", "fleet/kart01/yukart/policy")

	if _, stderr, code := runCmd(t, on(0, "push", "--timeout", "2s", "--vehicles", "kart01", camp)...); code != 1 || !strings.Contains(stderr, "no connection") {
		t.Errorf("push over MQTT 5 to a NATS node: exit %d, want 1 with %q:\n%s", code, "no connection", stderr)
	}
	stdout, stderr, code := runCmd(t, on(0, "push", "--mqtt", "3.1.1", "--vehicles", "kart01", camp)...)
	if code != 0 || stdout != "pushed version 3 to kart01 (fleet/kart01/yukart/policy)\n" {
		t.Fatalf("push --mqtt 3.1.1: exit %d, stdout %q:\n%s", code, stdout, stderr)
	}
	select {
	case p := <-got:
		if p != string(want) {
			t.Fatalf("kart01 was sent %q, want the campaign file %q", p, want)
		}
	case <-ctx.Done():
		t.Fatal("kart01 was never sent the campaign")
	}

	at := time.Now().UTC().Truncate(time.Second)
	hash := campaign.PolicyHash([]byte("defaults:\n  max_rate: 1\n"))
	ack, err := json.Marshal(campaign.Ack{Vehicle: "kart01", Applied: campaign.Applied{Version: 3, Hash: hash, At: at},
		Last: &campaign.Outcome{Version: 3, Result: campaign.ResultApplied, At: at}})
	if err != nil {
		t.Fatal(err)
	}
	natstest.PublishRetained(t, c, 1, "kart01", "fleet/kart01/yukart/decoder/campaign", ack)
	line := strings.Join([]string{"kart01", "3", "3", strings.TrimPrefix(hash, "sha256:")[:12], at.Format(time.RFC3339), "applied version 3"}, " ")
	statusBecomes(ctx, t, on(2, "status", "--mqtt", "3.1.1", "kart*"), line)
}

// carListens connects to node i as car id (its certificate, over MQTT
// 3.1.1 as its bridge would) and subscribes to topic: the payloads come
// on the channel.
func carListens(ctx context.Context, t *testing.T, c *natscluster.Cluster, i int, id, topic string) <-chan string {
	t.Helper()
	cert, key, err := c.Identity(id)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 8)
	car := natstest.Listen(t, mqttclient.Settings{Broker: c.Nodes[i].MQTTURL, ClientID: id, CAFile: c.CAFile, CertFile: cert, KeyFile: key},
		func(_, payload []byte, _ int64) { got <- string(payload) })
	if err := car.Subscribe(ctx, topic); err != nil {
		t.Fatalf("%s subscribing to %s: %v", id, topic, err)
	}
	return got
}

// statusBecomes runs `candec` with args (a campaign status) until its
// table is its header and exactly the line want (fields joined by one
// space): a node learns of a retained message from $MQTT_rmsgs a little
// after the publisher's PUBACK.
func statusBecomes(ctx context.Context, t *testing.T, args []string, want string) {
	t.Helper()
	var rows []string
	for ctx.Err() == nil {
		stdout, stderr, code := runCmd(t, args...)
		if code != 0 {
			t.Fatalf("candec %s: exit %d:\n%s", strings.Join(args, " "), code, stderr)
		}
		rows = rows[:0]
		for _, l := range strings.Split(strings.TrimSpace(stdout), "\n")[1:] {
			rows = append(rows, strings.Join(strings.Fields(l), " "))
		}
		if len(rows) == 1 && rows[0] == want {
			return
		}
		time.Sleep(100 * time.Millisecond) // another read, not a wait for something known
	}
	t.Fatalf("campaign status lists %q, want only %q", rows, want)
}
